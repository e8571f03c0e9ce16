// A memory snapshot of the site's Pyodide, started and not yet given a package: what every
// kernel's worker would otherwise compute for itself, in WebAssembly, before anything else
// (site/README.md, "Kernel start"). Usage:
//   node make_snapshot.mjs SITE_OUT SNAPSHOT
// SITE_OUT: the built site (its static/pyodide/ is the Pyodide snapshotted); SNAPSHOT: the file
// to write, relative to SITE_OUT, gzipped (the worker unpacks it with DecompressionStream).
// Prints one JSON line: the snapshot's size and its gzipped size, in bytes.
//
// Why before the packages: a snapshot holds WebAssembly memory only. The files a package
// unpacks live in the JavaScript side of the file system and would be missing after a restore,
// and Python holding JavaScript objects (IPython's and the kernel's imports do) cannot be
// written down by Pyodide 314's snapshot at all ("Unexpected hiwire entry"). So the worker
// restores this, then loads the packages and imports the kernel as before.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [out, snapshot] = process.argv.slice(2);
const core = path.resolve(out, "static", "pyodide") + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: core, _makeSnapshot: true });
const memory = pyodide.makeMemorySnapshot();
const packed = gzipSync(memory, { level: 9 });
writeFileSync(path.resolve(out, snapshot), packed);
console.log(JSON.stringify({ bytes: memory.length, gzipped: packed.length }));
