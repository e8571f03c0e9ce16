// Start Python as the browser edition's kernel does, from a built site, under node: the site's
// Pyodide, its lock and the packages its jupyter-lite.json preloads, then the kernel's imports.
// Usage: node site_kernel.mjs SITE_DIR PYTHON_FILE [snapshot] — runs PYTHON_FILE after the start
// and prints its last expression's value (a JSON string) on the last line; timings go to stderr.
// With `snapshot`, Python starts from the site's memory snapshot with the function the browser's
// kernel workers use (site/snapshot_restore.js), and the kernel's imports are already done.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

const [site, check, start] = process.argv.slice(2);
const kitRestore = new Function(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "..", "site", "snapshot_restore.js"), "utf8") +
    "\nreturn kitRestore;",
)();
const started = performance.now();
const lap = (what) =>
  console.error(`${what}: ${((performance.now() - started) / 1000).toFixed(2)} s`);
const config = JSON.parse(readFileSync(join(site, "jupyter-lite.json"), "utf8"));
const kernel =
  config["jupyter-config-data"].litePluginSettings["@jupyterlite/pyodide-kernel-extension:kernel"];
const options = kernel.loadPyodideOptions;
const core = join(site, "static", "pyodide") + "/";
const locks = join(site, "static", "pyodide-lock") + "/";
const { loadPyodide } = await import(pathToFileURL(join(core, "pyodide.mjs")).href);
const kernelOptions = {
  indexURL: core,
  lockFileURL: join(site, options.lockFileURL),
  packageBaseUrl: locks,
  packages: options.packages,
  messageCallback: () => {},
};
let pyodide;
if (start === "snapshot") {
  const { default: createModule } = await import(pathToFileURL(join(core, "pyodide.asm.mjs")).href);
  const bytes = gunzipSync(readFileSync(join(site, "static", "pyodide", "kit-snapshot.bin.gz")));
  pyodide = await kitRestore(loadPyodide, createModule, Promise.resolve(bytes), kernelOptions);
} else {
  pyodide = await loadPyodide(kernelOptions);
}
lap("Pyodide and the preloaded packages");
try {
  // what the kernel's worker runs next when everything it needs is preloaded (from the
  // snapshot: already done, so this imports nothing)
  await pyodide.runPythonAsync("import piplite.piplite\nimport pyodide_kernel");
  lap("the kernel's imports");
  console.log(await pyodide.runPythonAsync(readFileSync(check, "utf8")));
} catch (error) {
  console.error(error.message); // the Python traceback, not the minified runtime around it
  process.exit(1);
}
