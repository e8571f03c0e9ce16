// The kit's head start for the browser's Python kernel, worker side: the build puts this in
// front of the Pyodide kernel's worker script (kernel_early.js is the page's side).
//
// The kernel's worker loads Pyodide only when JupyterLab sends it the kernel's options. This
// begins at once, when the worker starts, with the options the site's settings give every
// kernel (the build fills in KIT_OPTIONS from jupyter-lite.json), then imports what the
// kernel imports first. The kernel's own call, `loadPyodide(options)`, goes through
// __kitPyodide (the build points it here): same options, so it takes this Pyodide, with its
// output sent where the kernel says; different options (another site's settings), so it loads
// its own, as before. The page hears when this Pyodide is up ("loaded", and whether it came
// from the snapshot) and which the kernel took ("warm" or "cold").
//
// This Pyodide starts from the site's memory snapshot (KIT_SNAPSHOT, made by the build with
// make_snapshot.mjs; restored by snapshot_restore.js): Python initialised and the kernel's
// first imports done, which were most of a start's seconds. Where the snapshot cannot be had
// (no DecompressionStream, a failed fetch, another Pyodide's snapshot) it starts the ordinary
// way.
const kitEarly = (() => {
  const root = new URL(KIT_ROOT, self.location.href);
  const options = {};
  for (const [key, value] of Object.entries(KIT_OPTIONS)) {
    // as the kernel extension does: settings ending in "URL" are relative to the site
    options[key] = key.endsWith("URL") && typeof value === "string" ? new URL(value, root).href : value;
  }
  const snapshot = async () => {
    const response = await fetch(new URL(KIT_SNAPSHOT, root));
    if (!response.ok) throw new Error(`${response.status} for the snapshot`);
    const bytes = await response.blob();
    const head = new Uint8Array(await bytes.slice(0, 2).arrayBuffer());
    if (head[0] !== 0x1f || head[1] !== 0x8b) {
      return new Uint8Array(await bytes.arrayBuffer()); // a server that unzipped it on the way
    }
    const unpacked = bytes.stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(unpacked).arrayBuffer());
  };
  const restore = async (loadPyodide) => {
    const { default: createModule } = await import(options.indexURL + "pyodide.asm.mjs");
    return kitRestore(loadPyodide, createModule, snapshot(), options); // snapshot_restore.js
  };
  const pyodide = (async () => {
    const { loadPyodide } = await import(options.indexURL + "pyodide.mjs");
    let loaded = null;
    if (typeof DecompressionStream === "function") {
      try {
        loaded = await restore(loadPyodide);
      } catch (error) {
        console.warn("the kernel's snapshot was not used:", error);
        loaded = null;
      }
    }
    const restored = loaded !== null;
    if (!restored) {
      loaded = await loadPyodide(options);
      await loaded.runPythonAsync(KIT_IMPORTS);
    }
    self.postMessage({ _kitKernel: "loaded", restored });
    return loaded;
  })();
  pyodide.catch(() => {}); // a failure shows when the kernel takes it, not as an unhandled one
  return { key: JSON.stringify(options), pyodide };
})();

globalThis.__kitPyodide = async (loadPyodide, options) => {
  if (JSON.stringify(options) !== kitEarly.key) {
    const own = await loadPyodide(options);
    self.postMessage({ _kitKernel: "cold" });
    return own;
  }
  const pyodide = await kitEarly.pyodide;
  pyodide.setStdout({ batched: options.stdout });
  pyodide.setStderr({ batched: options.stderr });
  self.postMessage({ _kitKernel: "warm" });
  return pyodide;
};
