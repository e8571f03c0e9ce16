// Run tests/portable_checks.py inside real Pyodide under node, against the working tree's package.
// Usage: node run_checks.mjs PYODIDE_DIR ROOT  — prints the checks' JSON report on its last line.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, root] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + "/" });

// The package's source, as files in Pyodide's own (in-memory) filesystem: nothing installed.
function copyTree(from, to) {
  pyodide.FS.mkdirTree(to);
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    if (statSync(source).isDirectory()) {
      if (name !== "__pycache__") copyTree(source, `${to}/${name}`);
    } else if (name.endsWith(".py") || name === "py.typed") {
      pyodide.FS.writeFile(`${to}/${name}`, readFileSync(source));
    }
  }
}
copyTree(join(root, "mini_agent"), "/kit/mini_agent");
pyodide.FS.writeFile("/kit/portable_checks.py", readFileSync(join(root, "tests", "portable_checks.py")));

try {
  const report = pyodide.runPython(`
import json, os, pathlib, sys, tempfile
sys.path.insert(0, "/kit")
import portable_checks
assert sys.platform == "emscripten" and not hasattr(os, "link"), "not the Pyodide we expect"
result = portable_checks.run(pathlib.Path(tempfile.mkdtemp()))
result["python"] = sys.version.split()[0]
json.dumps(result)
`);
  console.log(report);
} catch (error) {
  console.error(error.message); // the Python traceback, not the minified runtime around it
  process.exit(1);
}
