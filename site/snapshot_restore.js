// Start a Pyodide from the site's memory snapshot (make_snapshot.mjs), as every kernel's worker
// does (the build puts this file in front of the kernel's worker with kernel_early_worker.js;
// tests/pyodide/site_kernel.mjs runs the same function under node). A snapshot is WebAssembly
// memory only, so this gives back what lives outside it: the memory grown to the snapshot's
// size before it is copied in, the preloaded packages' files (loaded again, as
// `options.packages` says), and the objects of Pyodide's API that Python holds (by the names
// make_snapshot.mjs wrote down, answered from this Pyodide). Every restored Python has the
// same state, so `random` is seeded afresh from os.urandom; the hash seed (PYTHONHASHSEED)
// stays the build's.
//   loadPyodide: pyodide.mjs's; createModule: pyodide.asm.mjs's default export;
//   bytes: a promise of the snapshot, unzipped; options: the kernel's loadPyodide options.
async function kitRestore(loadPyodide, createModule, bytes, options) {
  let restored = null;
  const named = ({ name, kind }) => {
    const [scope, key] = name.split(".");
    const owner = () => (scope === "api" ? restored._api : restored);
    if (kind === "function") return (...args) => owner()[key](...args);
    const target = () => (key === undefined ? owner() : owner()[key]);
    return new Proxy({}, {
      get: (_, property) => target()[property],
      has: (_, property) => property in target(),
    });
  };
  restored = await loadPyodide({
    ...options,
    _loadSnapshot: bytes,
    _snapshotDeserializer: named,
    createPyodideModule: async (settings) => {
      const module = await createModule(settings);
      const memory = await bytes; // after its header: the memory, as large as it had grown
      const header = new DataView(memory.buffer, memory.byteOffset).getUint32(4, true);
      const heap = memory.length - header;
      if (module.HEAP8.length < heap) module._emscripten_resize_heap(heap);
      return module;
    },
  });
  await restored.runPythonAsync(
    "import random, sys\nrandom.seed()\nsys.path[:] = dict.fromkeys(sys.path)",
  );
  return restored;
}
