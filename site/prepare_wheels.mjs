// Runs prepare_wheels.py in the site's own Pyodide under node, so the bytecode it writes is
// the browser's Python's. Usage:
//   node prepare_wheels.mjs SITE_OUT SITE_SOURCE ARGUMENT...
// SITE_OUT: the built site (its static/pyodide/ is the Pyodide that runs here); SITE_SOURCE: the
// folder of prepare_wheels.py and site.json; ARGUMENTs go to prepare_wheels.py, each path in
// them relative to SITE_OUT (options start with --).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [out, source, ...rest] = process.argv.slice(2);
const core = path.resolve(out, "static", "pyodide") + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: core });
pyodide.setStdout({ batched: (line) => console.log(line) });
pyodide.setStderr({ batched: (line) => console.error(line) });
pyodide.mountNodeFS("/out", path.resolve(out));
pyodide.mountNodeFS("/source", path.resolve(source));
const argv = ["prepare_wheels.py", "/source/site.json", ...rest.map((a) => (a.startsWith("--") ? a : "/out/" + a))];
pyodide.globals.set("ARGV", pyodide.toPy(argv));
pyodide.runPython(`
import runpy, sys
sys.argv = list(ARGV)
runpy.run_path("/source/prepare_wheels.py", run_name="__main__")
`);
