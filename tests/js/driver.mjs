// Runs a batch of jobs for tests/test_node_differential.py: node driver.mjs jobs.json out.json
// Each job names files; results are plain data, so one node process serves thousands of cases.
import { readFile, writeFile } from "node:fs/promises";
import { appendSession, loadSession } from "./session.mjs";
import { estimateContextChars, trimContext } from "./context.mjs";

async function run(job) {
  if (job.op === "write") {
    // The messages arrive as transport JSON (Python's json.dumps, not the kit's form).
    for (const line of job.messages) await appendSession(job.path, JSON.parse(line));
    return {};
  }
  if (job.op === "load") {
    let messages;
    try {
      messages = await loadSession(job.path);
    } catch (error) {
      return { error: error.message };
    }
    if (job.rewrite) await writeFile(job.rewrite, messages.map((m) => `${JSON.stringify(m)}\n`).join(""), "utf8");
    const trims = (job.budgets ?? []).map((budget) => {
      try {
        return trimContext(messages, budget).length;
      } catch (error) {
        return error.message;
      }
    });
    return { count: messages.length, estimate: estimateContextChars(messages), trims };
  }
  if (job.op === "nonfinite") {
    // What JSON.stringify does with numbers JSON cannot hold: it writes null.
    const input = { nan: NaN, inf: Infinity, list: [-Infinity, 1] };
    await appendSession(job.path, { role: "assistant", content: "", toolCalls: [{ id: "a", name: "n", input }] });
    return {};
  }
  if (job.op === "numbers") {
    // Numbers and keys JavaScript makes itself, from a seeded generator of raw doubles.
    let state = BigInt(job.seed) | 1n;
    const bits = () => {
      state ^= (state << 13n) & 0xffffffffffffffffn;
      state ^= state >> 7n;
      state ^= (state << 17n) & 0xffffffffffffffffn;
      return state;
    };
    const view = new DataView(new ArrayBuffer(8));
    const pick = () => {
      const kind = Number(bits() % 4n);
      if (kind === 0) {
        view.setBigUint64(0, bits());
        const x = view.getFloat64(0);
        return Number.isFinite(x) ? x : 0.5;
      }
      if (kind === 1) return Number(bits() % 2000001n) / 1000 - 1000;
      if (kind === 2) return Number(bits() % 100000n) * 10 ** (Number(bits() % 60n) - 30);
      return Number(bits() % (2n ** 60n)) - 2 ** 59;
    };
    for (let i = 0; i < job.count; i++) {
      const input = {};
      input[String(Number(bits() % 12n))] = pick();
      input.x = pick();
      input[String(Number(bits() % 3n))] = [pick(), -0, pick()];
      await appendSession(job.path, { role: "assistant", content: "", toolCalls: [{ id: `c${i}`, name: "n", input }] });
    }
    return {};
  }
  throw new Error(`unknown op ${job.op}`);
}

const [jobsPath, outPath] = process.argv.slice(2);
const jobs = JSON.parse(await readFile(jobsPath, "utf8"));
const results = [];
for (const job of jobs) results.push(await run(job));
await writeFile(outPath, JSON.stringify(results), "utf8");
