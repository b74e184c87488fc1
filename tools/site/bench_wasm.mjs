// bench_wasm.mjs: the pages' WebAssembly builds timed against the native programs,
// on the same cases, in the same run (make bench-wasm; make bench runs it).
//
//   node tools/site/bench_wasm.mjs build/bin build/site/wasm
//
// Each case runs natively (a process) and as WebAssembly under node's own
// node:wasi (the module compiled once, before the timing), alternately, three
// times each; the table gives the best wall time of each and their ratio. The
// forward programs run one larger case each with --quiet; the trainer trains
// 50 steps. Timings, not a test: it fails only if a run fails.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { WASI } from "node:wasi";

const [bin, wasmDir] = process.argv.slice(2).map((d) => path.resolve(d));
const CASES = [
  ["selfatt_v1", "--batch 4 --seq 256 --dim 128"],
  ["mha", "--batch 2 --seq 256 --dim 256 --heads 8"],
  ["gqa", "--batch 2 --seq 256 --dim 256 --heads 8 --kv-heads 2"],
  ["decode", "--batch 1 --seq 256 --dim 256 --heads 8 --kv-heads 2"],
  ["induction", "--steps 50 --every 50"],
];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "abh-bench-wasm-"));
const devnull = fs.openSync("/dev/null", "w");

function native(name, args) {
  const t = process.hrtime.bigint();
  const r = spawnSync(path.join(bin, name), args, { cwd: tmp, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${name} ${args.join(" ")}: exit status ${r.status}`);
  return Number(process.hrtime.bigint() - t) / 1e9;
}
function wasm(module, name, args) {
  const t = process.hrtime.bigint();
  const wasi = new WASI({ version: "preview1", args: [name, ...args], env: {}, preopens: { "/": tmp },
                          returnOnExit: true, stdin: 0, stdout: devnull, stderr: devnull });
  const status = wasi.start(new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport }));
  if (status !== 0) throw new Error(`${name}.wasm ${args.join(" ")}: exit status ${status}`);
  return Number(process.hrtime.bigint() - t) / 1e9;
}

const cpu = os.cpus()[0];
console.log(`WebAssembly (node ${process.versions.node}'s node:wasi, V8) against native, best of 3 wall times`);
console.log(`machine: ${cpu ? cpu.model : "unknown CPU"}, ${os.cpus().length} cores seen, ${os.arch()}, load ${os.loadavg()[0].toFixed(1)} at the start`);
console.log("program".padEnd(12) + "case".padEnd(53) + "native s   wasm s   wasm/native");
let failed = 0;
for (const [name, flags] of CASES) {
  const file = path.join(wasmDir, name + ".wasm");
  if (!fs.existsSync(file) || !fs.existsSync(path.join(bin, name))) { console.log(`${name.padEnd(11)} (not built)`); continue; }
  const module = new WebAssembly.Module(fs.readFileSync(file));
  const args = [...flags.split(" "), "--quiet"];
  let n = Infinity, w = Infinity;
  try {
    for (let i = 0; i < 3; i++) { n = Math.min(n, native(name, args)); w = Math.min(w, wasm(module, name, args)); }
  } catch (e) { console.log(`${name}: ${e.message}`); failed++; continue; }
  console.log(`${name.padEnd(11)} ${flags.padEnd(52)} ${n.toFixed(3).padStart(8)} ${w.toFixed(3).padStart(8)} ${(w / n).toFixed(2).padStart(10)}x`);
}
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
