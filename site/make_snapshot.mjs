// A memory snapshot of the site's Pyodide as a kernel's worker would have it just before the
// kernel takes it: Python started, the preloaded packages loaded, the kernel's first imports
// done (site/README.md, "Kernel start"). Usage:
//   node make_snapshot.mjs SITE_OUT SNAPSHOT OPTIONS IMPORTS
// SITE_OUT: the built site (its Pyodide, lock and wheels are the ones snapshotted); SNAPSHOT: the
// file to write, relative to SITE_OUT, gzipped (the worker unpacks it with DecompressionStream);
// OPTIONS: the kernel's loadPyodide options as JSON (URLs relative to the site); IMPORTS: the
// Python the worker runs before the kernel takes it. Prints one JSON line: the snapshot's size,
// gzipped size, and the JavaScript objects Python holds, by name.
//
// A snapshot holds WebAssembly memory only, not the rest of the worker, so two things are done
// by the worker that restores it (kernel_early_worker.js): it loads the packages again, for
// their files (JavaScript's side of the file system), which is why the package list is emptied
// here before the snapshot (Pyodide would otherwise refuse: "Unexpected hiwire entry"); and the
// JavaScript objects Python keeps (Pyodide's own API, which micropip holds) are written down by
// name and handed back from the restoring Pyodide. An object without a name stops the build.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [out, snapshot, optionsJson, imports] = process.argv.slice(2);
const options = JSON.parse(optionsJson);
const core = path.resolve(out, options.indexURL) + path.sep;
const lock = path.resolve(out, options.lockFileURL);
const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
const quiet = () => {};
const pyodide = await loadPyodide({
  indexURL: core,
  lockFileURL: lock,
  packageBaseUrl: path.dirname(lock) + path.sep,
  messageCallback: quiet,
  _makeSnapshot: true,
});
await pyodide.loadPackage(options.packages, { messageCallback: quiet });
await pyodide.runPythonAsync(imports);

// Every object of Pyodide's public and internal API, by the name the restoring worker finds it by.
const names = new Map([[pyodide, { name: "public", kind: "object" }]]);
for (const [scope, owner] of [["public", pyodide], ["api", pyodide._api]]) {
  for (const key of Object.getOwnPropertyNames(owner)) {
    let value;
    try {
      value = owner[key];
    } catch {
      continue; // a getter that needs more than a started Pyodide
    }
    if (value !== null && ["object", "function"].includes(typeof value) && !names.has(value)) {
      names.set(value, { name: `${scope}.${key}`, kind: typeof value });
    }
  }
}
for (const name of Object.keys(pyodide.loadedPackages)) delete pyodide.loadedPackages[name];
const held = [];
const memory = pyodide.makeMemorySnapshot({
  serializer: (value) => {
    const named = names.get(value);
    if (!named) {
      throw new Error(`Python holds a JavaScript object the kit cannot name: ${String(value).slice(0, 80)}`);
    }
    held.push(named.name);
    return named;
  },
});
const packed = gzipSync(memory, { level: 9 });
writeFileSync(path.resolve(out, snapshot), packed);
console.log(JSON.stringify({ bytes: memory.length, gzipped: packed.length, held }));
