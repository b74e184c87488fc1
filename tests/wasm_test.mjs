// wasm_test.mjs: every program's WebAssembly build (make html's, for the pages'
// panels) prints what the native program prints and dumps the same .npy bytes.
//
//   node tests/wasm_test.mjs build/bin build/site/wasm selfatt_v1 mha ...   (make check-wasm)
//
// Each program is run on the cases the native tests run (tests/cli_test.lua):
// its defaults, each example its --help lists, --causal when it has the flag,
// each with --dump; and a refusal (an example that does not exist). Every case
// runs three ways: natively (build/bin), under node's own node:wasi, and under
// the book's layer (tools/site/wasi.mjs, what the page runs). Stdout, stderr,
// the exit status and every dumped file must be byte-identical across the
// three, and what the layer streams to onWrite as it is written adds up to what
// it returns. A trainer (a program whose --help lists --steps) trains 20 steps.
// TAP on stdout.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WASI } from "node:wasi";
import { run } from "../tools/site/wasi.mjs";

const [bin, wasmDir, ...programs] = process.argv.slice(2);
let n = 0, failed = 0;
const ok = (good, name, ...diag) => {
  n++;
  console.log(`${good ? "ok" : "not ok"} ${n} - ${name}`);
  if (!good) { failed++; for (const d of diag) console.log(String(d).replace(/^/gm, "#   ")); }
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "abh-wasm-"));

// Every file under dir, as { "relative/path": Buffer }.
function tree(dir, prefix = "") {
  const out = {};
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)) {
    const rel = prefix + e.name;
    if (e.isDirectory()) Object.assign(out, tree(path.join(dir, e.name), rel + "/"));
    else out[rel] = fs.readFileSync(path.join(dir, e.name));
  }
  return out;
}

function runNative(name, args, dir) {
  const r = spawnSync(path.resolve(bin, name), args, { cwd: dir, encoding: "latin1" });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status, files: tree(dir) };
}

function runNodeWasi(module, name, args, dir) {
  const outPath = path.join(tmp, "stdout"), errPath = path.join(tmp, "stderr");
  const out = fs.openSync(outPath, "w"), err = fs.openSync(errPath, "w");
  const wasi = new WASI({ version: "preview1", args: [name, ...args], env: {}, preopens: { "/": dir },
                          returnOnExit: true, stdin: 0, stdout: out, stderr: err });
  const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport });
  const status = wasi.start(instance);
  fs.closeSync(out); fs.closeSync(err);
  return { stdout: fs.readFileSync(outPath, "latin1"), stderr: fs.readFileSync(errPath, "latin1"), status,
           files: tree(dir) };
}

async function runOurs(module, name, args) {
  // what the layer hands onWrite as the program writes must add up to what it returns
  const streamed = { 1: "", 2: "" };
  const r = await run(module, [name, ...args], {}, { onWrite: (fd, text) => { streamed[fd] += text; } });
  if (streamed[1] !== r.stdout) r.stdout = "(onWrite saw another stdout: " + streamed[1] + ")";
  if (streamed[2] !== r.stderr) r.stderr = "(onWrite saw another stderr: " + streamed[2] + ")";
  const latin1 = s => Buffer.from(s, "utf8").toString("latin1");
  const files = {};
  for (const [p, data] of Object.entries(r.files)) files[p] = Buffer.from(data);
  return { stdout: latin1(r.stdout), stderr: latin1(r.stderr), status: r.status, files };
}

// Where two runs differ, in words (empty when they are the same).
function differences(a, b) {
  const d = [];
  for (const k of ["stdout", "stderr", "status"]) {
    if (a[k] === b[k]) continue;
    const la = String(a[k]).split("\n"), lb = String(b[k]).split("\n");
    const i = la.findIndex((line, j) => line !== lb[j]);
    d.push(`${k}, line ${i + 1}: ${JSON.stringify(la[i])} natively, ${JSON.stringify(lb[i])} in WebAssembly`);
  }
  const names = new Set([...Object.keys(a.files), ...Object.keys(b.files)]);
  for (const f of names) {
    if (!a.files[f] || !b.files[f]) d.push(`${f}: written by one run only`);
    else if (!a.files[f].equals(b.files[f])) d.push(`${f}: the bytes differ`);
  }
  return d;
}

console.log("TAP version 13");
const started = Date.now();
for (const name of programs) {
  const file = path.join(wasmDir, name + ".wasm");
  if (!fs.existsSync(file)) { ok(false, `${name}: ${file} was built`); continue; }
  const module = await WebAssembly.compile(fs.readFileSync(file));
  const usage = spawnSync(path.resolve(bin, name), ["--help"], { encoding: "utf8" }).stdout;
  const flags = new Set(usage.match(/^  --[\w-]+/gm).map(f => f.trim()));
  const examples = [];
  let inExamples = false;
  for (const line of usage.split("\n")) {
    if (/^\S/.test(line)) inExamples = line === "examples:";
    const m = inExamples && line.match(/^  ([\w-]+)\s/);
    if (m) examples.push(m[1]);
  }
  const extra = flags.has("--steps") ? ["--steps", "20", "--every", "10"] : [];
  const cases = [["--help"], [...extra]];
  for (const e of examples) cases.push(["--example", e]);
  if (flags.has("--causal")) cases.push(["--causal", ...extra]);
  if (flags.has("--example")) cases.push(["--example", "no-such-case"]);
  for (const args0 of cases) {
    const args = flags.has("--dump") && args0[0] !== "--help" ? [...args0, "--dump", "run"] : args0;
    const dirs = ["native", "node"].map(k => { const d = path.join(tmp, k); fs.rmSync(d, { recursive: true, force: true }); fs.mkdirSync(d); return d; });
    const native = runNative(name, args, dirs[0]);
    const nodeWasi = runNodeWasi(module, name, args, dirs[1]);
    const ours = await runOurs(module, name, args);
    const what = `${name} ${args.join(" ")}`.trim();
    const files = Object.keys(native.files).length;
    ok(differences(native, nodeWasi).length === 0, `${what}: node:wasi prints and dumps what the native program does (${files} files)`,
       ...differences(native, nodeWasi));
    ok(differences(native, ours).length === 0, `${what}: the page's WASI layer prints and dumps the same`,
       ...differences(native, ours));
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`1..${n}`);
console.log(`# ${programs.length} programs, ${n} checks in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
