// The kit's head start for the browser's Python kernel, page side (site/README.md, "Kernel
// start"). The build loads this file first in lab/, notebooks/ and repl/.
//
// A kernel of this site is a worker running Pyodide. JupyterLab creates it only when a notebook
// asks for one, after its own ~4 s of JavaScript; loading Pyodide then takes as long again.
// So this starts a kernel worker at once, which begins loading Pyodide by itself
// (kernel_early_worker.js, put in front of the kernel's worker by the build), and hands it to
// the first kernel JupyterLab starts. With data-spares="1" (lab/: many notebooks in one page)
// it keeps one more worker warming, for the next notebook opened or a kernel restart.
//
// window.__kitKernels tells the site test what happened: how many kernels found their Pyodide
// already loading ("warm") or had to load it ("cold"), and for each worker when (ms since the
// page began) it started, had Pyodide up, and was handed to a kernel, and whether its Pyodide
// was restored from the site's snapshot.
(() => {
  const script = document.currentScript;
  const root = new URL("../../", script.src); // this file is static/kit/ in the site
  const worker = new URL(script.dataset.worker, root).href;
  const spares = Number(script.dataset.spares || "0");
  const Original = window.Worker;
  const counts = { warm: 0, cold: 0, workers: [] };
  const kept = [];
  window.__kitKernels = counts;

  const start = () => {
    const next = new Original(worker, { type: "module" });
    const times = { started: performance.now(), loaded: null, handed: null, restored: null };
    counts.workers.push(times);
    next.addEventListener("message", (event) => {
      const said = event.data && event.data._kitKernel;
      if (said === "loaded") {
        times.loaded = performance.now();
        times.restored = event.data.restored;
      }
      if (said === "warm" || said === "cold") counts[said] += 1;
    });
    kept.push([next, times]);
  };

  function KitWorker(url, options) {
    if (new URL(String(url), document.baseURI).href !== worker || kept.length === 0) {
      return new Original(url, options);
    }
    const [handed, times] = kept.shift();
    times.handed = performance.now();
    if (spares > kept.length) {
      // the next one begins once this one's Pyodide is up, so the two do not share the CPU
      const begin = (event) => {
        if (event.data && event.data._kitKernel) {
          handed.removeEventListener("message", begin);
          start();
        }
      };
      handed.addEventListener("message", begin);
    }
    return handed;
  }
  KitWorker.prototype = Original.prototype;
  window.Worker = KitWorker;
  start();
})();
