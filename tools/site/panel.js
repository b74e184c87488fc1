// panel.js: the "Run it here" panel of a chapter page (make html appends it to
// tools/site/wasi.mjs, made a classic script, as build/site/run/panel.js; the
// page loads it when the reader first opens the panel).
//
// The panel knows little of a program but its name: it runs `NAME --help` to
// learn its flags, examples and defaults, offers them, runs the program as the
// reader asks with `--dump run`, shows its printout and the command line they
// would type at home, and draws run/attn.npy as the figures draw attention maps
// (tools/heatmap.gp: queries down, keys across, the viridis-like palette, a
// hidden key grey and hatched). A program's WebAssembly is run/NAME.js, loaded
// by a <script> tag (so that it works from file://) the first time it is run.
// After a run it offers what the run's own files and printout allow: after an
// --example, a row of any dumped input to edit and load back (--load); after a
// decoding run (its "step cache" table), its steps one by one; for a trainer
// (--steps, --every), its progress lines drawn as curves while it trains, then
// its heads' maps and each head silenced (--ablate) in the trained model.
"use strict";
(function () {
  const wasm = {};                     // name -> Promise of its WebAssembly.Module
  const waiting = {};                  // name -> resolve, until run/NAME.js calls abhWasm
  globalThis.abhWasm = (name, base64) => {
    const bytes = Uint8Array.from(atob(base64), c => c.charCodeAt(0));
    if (waiting[name]) waiting[name](WebAssembly.compile(bytes));
  };
  function program(name) {
    if (!wasm[name]) wasm[name] = new Promise((resolve, reject) => {
      waiting[name] = resolve;
      const s = document.createElement("script");
      s.src = "run/" + name + ".js";
      s.onerror = () => reject(new Error("run/" + name + ".js is missing: make html builds it"));
      document.head.appendChild(s);
    }).then(p => p);
    return wasm[name];
  }

  // ---- a run in a worker, so that the page stays responsive and a run can be
  // stopped; the worker is made from abhWasiLayer's own source (a Blob, which
  // works from file://). Where workers fail, the run is made in the page.
  let workerURL = null;
  function workerSource() {
    return abhWasiLayer.toString() + "\nconst run = abhWasiLayer();\n" +
      "onmessage = async (e) => {\n" +
      "  const onWrite = e.data.stream ? (fd, text) => postMessage({ write: text, fd }) : undefined;\n" +
      "  try { postMessage({ result: await run(e.data.module, e.data.args, e.data.files || {}, { onWrite }) }); }\n" +
      "  catch (err) { postMessage({ error: String(err && err.message || err) }); }\n};\n";
  }
  // onWrite(fd, text), if given, sees what the program prints as it prints it.
  function runInWorker(module, args, stopButton, files, onWrite) {
    try {
      workerURL = workerURL || URL.createObjectURL(new Blob([workerSource()], { type: "text/javascript" }));
      const worker = new Worker(workerURL);
      return new Promise((resolve, reject) => {
        const done = () => { worker.terminate(); stopButton.hidden = true; stopButton.onclick = null; };
        worker.onmessage = (e) => {
          if (e.data.write !== undefined) { if (onWrite) onWrite(e.data.fd, e.data.write); return; }
          done(); stopButton.closest("details").dataset.ranIn = "worker";
          e.data.error ? reject(new Error(e.data.error)) : resolve(e.data.result);
        };
        worker.onerror = (e) => { done(); e.preventDefault(); reject(new Error(e.message || "the worker failed")); };
        stopButton.hidden = false;
        stopButton.onclick = () => { done(); resolve({ stdout: "", stderr: "", status: null, files: {}, stopped: true }); };
        worker.postMessage({ module, args, files: files || {}, stream: !!onWrite });
      });
    } catch (e) {
      return abhRun(module, args, files || {}, { onWrite });
    }
  }

  // ---- the program's --help: its flags, examples and defaults ----
  const SKIP = new Set(["--load", "--dump", "--example", "--quiet", "--help"]);
  function readUsage(text) {
    const flags = [], examples = [], defaults = {};
    let inExamples = false;
    for (const line of text.split("\n")) {
      if (/^\S/.test(line)) inExamples = line === "examples:";
      const f = line.match(/^  (--[\w-]+) ?([A-Z][\w.]*)?\s+(.*)$/);    // --ablate L.H takes a value too
      if (f && !SKIP.has(f[1])) flags.push({ name: f[1], value: f[2] || "", doc: f[3] });
      const e = inExamples && line.match(/^  ([\w-]+)\s+(.*)$/);
      if (e) examples.push({ name: e[1], doc: e[2] });
      const d = line.match(/^defaults: (.*)/);
      if (d) for (const [, k, v] of d[1].matchAll(/(--[\w-]+) (\S+)/g)) defaults[k] = v;
    }
    return { flags, examples, defaults };
  }

  // ---- .npy (float32, little-endian, C order) ----
  function readNpy(bytes) {
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const major = bytes[6];
    const len = major === 1 ? v.getUint16(8, true) : v.getUint32(8, true);
    const start = major === 1 ? 10 : 12;
    const header = new TextDecoder().decode(bytes.subarray(start, start + len));
    if (!/'descr':\s*'<f4'/.test(header)) return null;
    const shape = (header.match(/'shape':\s*\(([^)]*)\)/)[1].match(/\d+/g) || []).map(Number);
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = v.getFloat32(start + len + 4 * i, true);
    return { shape, data, bytes, at: start + len };
  }
  // The same .npy with data[i] = values[i]: same header, so the program reads it as it wrote it.
  function writeNpy(npy, values) {
    const out = npy.bytes.slice(), v = new DataView(out.buffer);
    values.forEach((x, i) => v.setFloat32(npy.at + 4 * i, x, true));
    return out;
  }

  // seen[i] for every weight i: 0 where the mask (broadcast from the right, as
  // masked_fill does) is 0, or --causal hides key s > query t; else 1.
  function seenKeys(w, mask, causal) {
    const seen = new Uint8Array(w.data.length).fill(1);
    const nd = w.shape.length, T = w.shape[nd - 2], S = w.shape[nd - 1];
    const ok = mask && mask.shape.length <= nd &&
      mask.shape.every((m, i) => m === 1 || m === w.shape[nd - mask.shape.length + i]);
    for (let i = 0; i < seen.length; i++) {
      if (causal && i % S > Math.floor(i / S) % T) seen[i] = 0;
      if (ok) {
        let rest = i, at = 0, stride = 1;
        for (let a = nd - 1; a >= nd - mask.shape.length; a--) {
          const coord = rest % w.shape[a];
          rest = Math.floor(rest / w.shape[a]);
          const m = mask.shape[a - (nd - mask.shape.length)];
          at += (m === 1 ? 0 : coord) * stride;
          stride *= m;
        }
        if (mask.data[at] === 0) seen[i] = 0;
      }
    }
    return seen;
  }

  // ---- drawing: tools/heatmap.gp's palette and marks, in SVG ----
  const STOPS = [[0, 0x44, 0x01, 0x54], [0.25, 0x3b, 0x52, 0x8b], [0.5, 0x21, 0x91, 0x8c],
                 [0.75, 0x5e, 0xc9, 0x62], [1, 0xfd, 0xe7, 0x25]];
  function colour(v) {
    v = Math.min(1, Math.max(0, v));
    let k = 0;
    while (k < STOPS.length - 2 && v > STOPS[k + 1][0]) k++;
    const [a, b] = [STOPS[k], STOPS[k + 1]], t = (v - a[0]) / (b[0] - a[0]);
    return "rgb(" + [1, 2, 3].map(j => Math.round(a[j] + t * (b[j] - a[j]))).join(",") + ")";
  }
  let patterns = 0;
  const NS = "http://www.w3.org/2000/svg";
  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  // One (T, S) map: weights w.data[off ...], seen likewise, titled; words, if
  // given ({ keys, queries }, one a position, as the figures' xwords and
  // ywords), label the keys and the queries (the keys' words when T = S).
  function drawMap(w, seen, off, title, words) {
    const nd = w.shape.length, T = w.shape[nd - 2], S = w.shape[nd - 1];
    const keyWords = words && words.keys.length === S ? words.keys : null;
    const queryWords = words && (words.queries || (T === S && words.keys));
    words = (keyWords || queryWords) && true;
    const cell = Math.max(Math.max(T, S) > 16 ? 9 : 14, Math.min(44, Math.floor(320 / Math.max(T, S))));
    const every = Math.max(T, S) > 16 ? 4 : 1;   // on a large map, every 4th position is numbered
    const left = words ? 62 : 34, top = 26, width = left + S * cell + 6, height = top + T * cell + (words ? 48 : 34);
    const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "run-map", role: "img",
                            "aria-label": title });
    const id = "abh-hatch-" + (++patterns);
    const defs = el("defs", {}, svg);
    for (const [suffix, stroke] of [["", "#7a7a7a"], ["-leak", "#ffffff"]]) {
      const p = el("pattern", { id: id + suffix, patternUnits: "userSpaceOnUse", width: 6, height: 6 }, defs);
      el("path", { d: "M-1,1 l2,-2 M0,6 l6,-6 M5,7 l2,-2", stroke, "stroke-width": 1.2 }, p);
    }
    el("text", { x: left, y: 16, class: "run-map-title" }, svg).textContent = title;
    const label = cell >= 28;
    for (let t = 0; t < T; t++) {
      for (let s = 0; s < S; s++) {
        const i = off + t * S + s, v = w.data[i], hidden = !seen[i];
        const x = left + s * cell, y = top + t * cell;
        const r = el("rect", { x, y, width: cell, height: cell, class: "run-cell", "data-q": t, "data-k": s,
                               "data-value": String(v), "data-hidden": hidden ? 1 : 0,
                               fill: v !== v ? "#ffffff" : hidden && v === 0 ? "#d4d4d4" : colour(v) }, svg);
        el("title", {}, r).textContent = `query ${t}, key ${s}: ${v}` + (hidden ? " (hidden)" : "");
        if (hidden) el("rect", { x, y, width: cell, height: cell, fill: `url(#${id}${v === 0 ? "" : "-leak"})`,
                                 "pointer-events": "none", "data-q": t }, svg);
        const text = v !== v ? "NaN" : v === 0 ? (hidden ? "" : "0") : v.toFixed(2);
        if (label && text)
          el("text", { x: x + cell / 2, y: y + cell / 2 + 4, "text-anchor": "middle", class: "run-cell-text", "data-q": t,
                       fill: v === v && v < 0.6 ? "#ffffff" : "#000000" }, svg).textContent = text;
      }
    }
    for (let s = 0; s < S; s += every) {
      el("text", { x: left + s * cell + cell / 2, y: top + T * cell + 14, "text-anchor": "middle",
                   class: "run-axis" }, svg).textContent = keyWords ? keyWords[s] : s;
      if (keyWords) el("text", { x: left + s * cell + cell / 2, y: top + T * cell + 28, "text-anchor": "middle",
                              class: "run-axis" }, svg).textContent = s;
    }
    for (let t = 0; t < T; t += every)
      el("text", { x: left - 6, y: top + t * cell + cell / 2 + 4, "text-anchor": "end", class: "run-axis run-query",
                   "data-q": t }, svg).textContent = queryWords && queryWords.length === T ? t + " " + queryWords[t] : t;
    el("text", { x: left + S * cell / 2, y: height - 4, "text-anchor": "middle", class: "run-axis" }, svg)
      .textContent = "key position";
    return svg;
  }

  // Every (T, S) map of one batch element b: one for (B, T, S), H for (B, H, T, S);
  // a trainer's attn.npy is (layers, H, T, T), every layer drawn.
  function drawMaps(box, w, seen, b, words, layers) {
    box.textContent = "";
    const nd = w.shape.length, T = w.shape[nd - 2], S = w.shape[nd - 1];
    const H = nd === 4 ? w.shape[1] : 1;
    for (const l of layers ? w.shape.slice(0, 1).flatMap(L => Array.from({ length: L }, (_, i) => i)) : [b])
      for (let h = 0; h < H; h++)
        box.appendChild(drawMap(w, seen, (l * H + h) * T * S,
          layers ? `layer ${l}, head ${h}` : nd === 4 ? `head ${h}` : `sequence ${b}`, words));
  }

  // ---- a trainer's progress: the lines it prints every --every steps ----
  const PROGRESS = /^step\s+(\d+)\s+loss ([\d.]+)\s+held-out loss ([\d.]+)\s+accuracy ([\d.]+)\s+previous-token ([\d.]+)\s+induction ([\d.]+)/;
  const SERIES = [["loss", 1, "#440154"], ["held-out loss", 2, "#21918c"], ["accuracy", 3, "#440154"],
                  ["previous-token", 4, "#3b528b"], ["induction", 5, "#5ec962"]];
  // Two small charts, loss and the scores in [0, 1], steps across to `steps`.
  function drawCurves(box, points, steps) {
    box.textContent = "";
    const W = 300, H = 160, L = 40, B = 22, T = 36;
    for (const [title, series, top] of [["loss", SERIES.slice(0, 2), null], ["accuracy and the heads' scores", SERIES.slice(2), 1]]) {
      const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "run-map run-curve",
                              "data-points": points.length, role: "img", "aria-label": title }, box);
      const ymax = top || Math.max(1, ...points.map(p => Math.max(p[1], p[2]))) * 1.05;
      const X = x => L + (W - L - 8) * x / Math.max(1, steps), Y = y => T + (H - T - B) * (1 - y / ymax);
      el("text", { x: L, y: 13, class: "run-map-title" }, svg).textContent = title;
      el("path", { d: `M${L},${T} V${H - B} H${W - 8}`, stroke: "#000", fill: "none" }, svg);
      for (const y of [0, ymax / 2, ymax])
        el("text", { x: L - 4, y: Y(y) + 4, "text-anchor": "end", class: "run-axis" }, svg).textContent = y.toFixed(top ? 1 : 0);
      el("text", { x: W - 8, y: H - 6, "text-anchor": "end", class: "run-axis" }, svg).textContent = `step ${steps}`;
      el("text", { x: L, y: H - 6, class: "run-axis" }, svg).textContent = "0";
      series.forEach(([name, k, colour], j) => {
        if (points.length) el("polyline", { points: points.map(p => `${X(p[0])},${Y(p[k])}`).join(" "), fill: "none",
                                            stroke: colour, "stroke-width": 2, "stroke-dasharray": j % 2 ? "5 3" : "" }, svg);
        const lx = 8 + series.slice(0, j).reduce((x, [n]) => x + 24 + 6.2 * n.length, 0);
        el("path", { d: `M${lx},${T - 10} h14`, stroke: colour, "stroke-width": 2, "stroke-dasharray": j % 2 ? "5 3" : "" }, svg);
        el("text", { x: lx + 17, y: T - 6, class: "run-axis" }, svg).textContent = name;
      });
    }
  }

  // ---- the panel ----
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    for (const c of children) e.append(c);
    return e;
  }
  const quote = a => /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";
  const commandLine = argv => "build/bin/" + argv.map(quote).join(" ");

  async function setUp(panel) {
    const body = panel.querySelector(".run-body");
    const names = panel.dataset.programs.split(/\s+/);
    const wordsOf = JSON.parse(panel.dataset.words || "{}");   // "NAME --example E" -> "the|cat|..."
    const ui = h("form", { class: "run-form" });
    body.appendChild(ui);
    const pick = h("select", { name: "program", "aria-label": "program" },
                   ...names.map(n => h("option", { value: n, text: n })));
    const controls = h("div", { class: "run-controls" });
    const runButton = h("button", { type: "submit", class: "run-button", text: "Run" });
    const stopButton = h("button", { type: "button", class: "run-stop", text: "Stop" });
    stopButton.hidden = true;
    const command = h("pre", { class: "run-command" });
    const status = h("p", { class: "run-status", "aria-live": "polite" });
    const live = h("div", { class: "run-live" });
    const batch = h("div", { class: "run-batch" });
    const maps = h("div", { class: "run-maps" });
    const legend = h("p", { class: "run-legend" },
      h("span", { class: "run-bar" }), " weight 0 to 1 ",
      h("span", { class: "run-hidden-swatch" }), " hidden by the mask");
    const extra = h("div", { class: "run-extra" });
    const output = h("pre", { class: "run-output" });
    ui.append(h("div", { class: "run-row" }, names.length > 1 ? pick : "", controls, runButton, stopButton),
              command, status, live, batch, maps, legend, extra, output);
    legend.hidden = true;
    let usage, module;

    // An example sets its own sizes and numbers: the flags of the help's
    // "defaults:" line (the sizes and the seed) are refused beside it, so they
    // are not offered while one is picked.
    function offer() {
      const ex = controls.querySelector("select[name='--example']");
      for (const input of controls.querySelectorAll("input")) {
        const off = !!(ex && ex.value) && input.name in usage.defaults;
        input.disabled = off;
        input.closest("label").classList.toggle("run-off", off);
        input.closest("label").title = off ? `--example ${ex.value} sets its own sizes and numbers` : input.dataset.doc;
      }
    }
    async function choose(name) {
      status.textContent = "Loading " + name + "…";
      const m = await program(name);
      const help = await abhRun(m, [name, "--help"], {});
      usage = readUsage(help.stdout);
      controls.textContent = "";
      if (usage.examples.length) {
        const ex = h("select", { name: "--example" }, h("option", { value: "", text: "defaults" }),
                     ...usage.examples.map(e => h("option", { value: e.name, text: e.name, title: e.doc })));
        ex.addEventListener("change", offer);
        controls.append(h("label", {}, "case ", ex));
      }
      for (const f of usage.flags) {
        const input = f.value ? h("input", { name: f.name, size: 6, placeholder: usage.defaults[f.name] || "",
                                             inputmode: "decimal", autocomplete: "off" })
                              : h("input", { type: "checkbox", name: f.name });
        input.dataset.doc = f.doc;
        controls.append(h("label", { title: f.doc }, f.value ? f.name + " " : "", input, f.value ? "" : " " + f.name));
      }
      offer();
      status.textContent = "";
      return (module = m);
    }
    let ready = choose(names[0]);
    pick.addEventListener("change", () => { ready = choose(pick.value); });
    const has = flag => usage.flags.some(f => f.name === flag);

    // Runs argv on files; shows its printout and status; null if it was stopped.
    async function execute(argv, files, onWrite) {
      runButton.disabled = true;
      for (const b of extra.querySelectorAll("button")) b.disabled = true;
      delete panel.dataset.status;
      status.textContent = "Running…";
      const started = performance.now();
      let r;
      try {
        r = await runInWorker(module, argv, stopButton, files, onWrite);
      } catch (e) {
        r = { stdout: "", stderr: String(e), status: -1, files: {} };
      }
      const ms = Math.round(performance.now() - started);
      runButton.disabled = false;
      for (const b of extra.querySelectorAll("button")) b.disabled = false;
      if (r.stopped) {
        status.textContent = `Stopped after ${ms} ms.`;
        output.textContent = "";
        maps.textContent = ""; batch.textContent = ""; legend.hidden = true;
        return null;
      }
      output.textContent = r.stdout + r.stderr;
      output.classList.toggle("run-refused", r.status !== 0);
      status.textContent = r.status === 0 ? `Ran in ${ms} ms; exit status 0.`
        : `The program refused (exit status ${r.status}): ${r.stderr.trim().split("\n").pop()}`;
      r.started = started;
      return r;
    }

    // Draws run/attn.npy of r, the example's words on its axes.
    function show(r, args, words, layers) {
      maps.textContent = ""; batch.textContent = ""; legend.hidden = true;
      const w = r.status === 0 && r.files["run/attn.npy"] && readNpy(r.files["run/attn.npy"]);
      if (w && w.shape.length >= 3) {
        const mask = r.files["run/attention_mask.npy"] && readNpy(r.files["run/attention_mask.npy"]);
        const seen = seenKeys(w, mask, args.includes("--causal"));
        legend.hidden = false;
        const B = w.shape[0];
        if (B > 1 && !layers) {
          const sel = h("select", { "aria-label": "sequence" },
                        ...Array.from({ length: B }, (_, b) => h("option", { value: b, text: "sequence " + b })));
          sel.addEventListener("change", () => drawMaps(maps, w, seen, Number(sel.value), words));
          batch.append(h("label", {}, "attn.npy, shape (" + w.shape.join(", ") + "): ", sel));
        } else {
          batch.append("attn.npy, shape (" + w.shape.join(", ") + ")" + (layers ? ": layers down, heads across" : ""));
        }
        drawMaps(maps, w, seen, 0, words, layers);
        panel.dataset.drawnMs = Math.round(performance.now() - r.started);
      }
      panel.dataset.status = r.status;
    }

    ui.addEventListener("submit", async ev => {
      ev.preventDefault();
      const name = names.length > 1 ? pick.value : names[0];
      await ready;
      offer();                         // the example picked, however it was picked
      const args = [];
      for (const input of controls.querySelectorAll("select, input")) {
        if (input.disabled) continue;
        if (input.type === "checkbox") { if (input.checked) args.push(input.name); }
        else if (input.value.trim() !== "") args.push(input.name, input.value.trim());
      }
      const argv = [name, ...args, "--dump", "run"];
      command.textContent = commandLine(argv);
      extra.textContent = ""; live.textContent = "";
      const example = args.includes("--example") ? args[args.indexOf("--example") + 1] : "";
      const said = example && wordsOf[name + " --example " + example];
      const words = said && { keys: said.split("/")[0].split("|"), queries: said.split("/")[1] && said.split("/")[1].split("|") };
      const training = has("--steps") && has("--every");
      const r = await execute(argv, {}, training ? progress(args) : undefined);
      if (!r) return;
      show(r, args, words, training);
      if (r.status !== 0) return;
      if (example) editor(name, args, r, words);
      if (/^step +cache/m.test(r.stdout) && r.files["run/k_cache.npy"]) stepper(r);
      if (training) ablations(name, args, r);
    });

    // ---- a trainer: its progress lines drawn as they are printed ----
    function progress(args) {
      const at = (flag) => Number(args.includes(flag) ? args[args.indexOf(flag) + 1] : usage.defaults[flag]);
      const steps = at("--steps"), points = [], charts = h("div", { class: "run-curves" });
      const scores = h("p", { class: "run-scores" });
      live.append(h("p", { class: "run-note", text:
        `Redrawn live: the curves and the scores, each time the program prints a progress line (every ${at("--every")} steps). ` +
        "Drawn at the end: the heads' maps, from the attn.npy the program writes when it has finished training." }),
        charts, scores);
      drawCurves(charts, points, steps);
      let text = "";
      return (fd, chunk) => {
        if (fd !== 1) return;
        text += chunk;
        const lines = text.split("\n");
        text = lines.pop();
        for (const line of lines) {
          const m = line.match(PROGRESS);
          if (!m) continue;
          points.push(m.slice(1).map(Number));
          panel.dataset.livePoints = points.length;
          drawCurves(charts, points, steps);
          scores.textContent = `step ${m[1]}: loss ${m[2]}, held-out loss ${m[3]}, accuracy ${m[4]}; ` +
            `best previous-token head ${m[5]}, best induction head ${m[6]}`;
        }
      };
    }

    // After a training run: silence one head of the trained model at a time.
    function ablations(name, args, r) {
      const w = r.files["run/attn.npy"] && readNpy(r.files["run/attn.npy"]);
      if (!w || w.shape.length !== 4) return;
      const [L, H] = w.shape, files = {};
      for (const f in r.files) if (f.startsWith("run/")) files["model/" + f.slice(4)] = r.files[f];
      const result = h("pre", { class: "run-ablation" });
      const buttons = h("div", { class: "run-row" }, "Silence a head of the trained model: ");
      const heads = [""];
      for (let l = 0; l < L; l++) for (let k = 0; k < H; k++) heads.push(l + "." + k);
      for (const head of heads) {
        const b = h("button", { type: "button", class: "run-ablate", "data-head": head, text: head || "none" });
        b.addEventListener("click", async () => {
          const argv = [name, "--load", "model", "--heads", String(H), "--layers", String(L), "--steps", "0",
                        ...(head ? ["--ablate", head] : [])];
          result.textContent = "$ " + commandLine(argv) + "\n";
          command.textContent = commandLine([name, ...args, "--dump", "model"]) + "\n" + commandLine(argv);
          const saved = output.textContent;
          const s = await execute(argv, files);
          if (!s) return;
          result.textContent += s.stdout + s.stderr;
          output.textContent = saved;
          panel.dataset.ablated = head;
          panel.dataset.status = s.status;
        });
        buttons.append(b);
      }
      extra.append(buttons, result);
    }

    // ---- a decoding run, step by step: its table's rows, the map's rows, the cache ----
    function stepper(r) {
      const lines = r.stdout.split("\n"), head = lines.findIndex(l => /^step +cache/.test(l));
      const rows = [];
      for (let i = head + 1; i < lines.length && /^ *\d+ /.test(lines[i]); i++) rows.push(lines[i]);
      if (!rows.length) return;
      const table = h("pre", { class: "run-steps" }), size = h("p", { class: "run-cache" });
      const next = h("button", { type: "button", class: "run-step", text: "Step" });
      const all = h("button", { type: "button", text: "All steps" });
      let t = 0;
      const reveal = () => {
        table.textContent = [lines[head], ...rows.slice(0, t + 1)].join("\n");
        const m = rows[t].match(/^ *(\d+) +\(([^)]*)\) +(\d+) +(\d+)/);
        size.textContent = `Step ${t}: token ${t} wrote its key and value; the cache holds (${m[2]}), ` +
          `${m[3]} numbers of K and V, ${m[4]} bytes; row ${t} of each map was computed at this step.`;
        for (const e of maps.querySelectorAll("[data-q]")) {
          e.style.visibility = Number(e.dataset.q) > t ? "hidden" : "";
          e.classList.toggle("run-now", Number(e.dataset.q) === t && e.classList.contains("run-cell"));
        }
        next.disabled = t + 1 >= rows.length;
        panel.dataset.step = t;
      };
      next.addEventListener("click", () => { t++; reveal(); });
      all.addEventListener("click", () => { t = rows.length - 1; reveal(); });
      extra.append(h("div", { class: "run-row" }, next, all), size, table);
      reveal();
    }

    // ---- the example's numbers, edited: --dump, change a row, --load ----
    function editor(name, args, r, words) {
      const inputs = Object.keys(r.files).filter(f => /^run\/(X|[\w.]+\.(weight|bias))\.npy$/.test(f))
        .map(f => f.slice(4));
      if (!inputs.length) return;
      const original = {}, edited = {};
      for (const f of inputs) original[f] = readNpy(r.files["run/" + f]);
      const rowsOf = f => {
        const s = original[f].shape;
        return s.length === 1 ? 1 : s.slice(0, -1).reduce((a, b) => a * b, 1);
      };
      const tensor = h("select", { name: "tensor", "aria-label": "tensor" },
        ...inputs.map(f => h("option", { value: f, text: f.replace(/\.npy$/, "") })));
      tensor.value = inputs.includes("X.npy") ? "X.npy" : inputs[0];
      const row = h("select", { name: "row", "aria-label": "row" });
      const cells = h("div", { class: "run-edit-row" });
      const go = h("button", { type: "button", class: "run-edit-run", text: "Run on these numbers" });
      const undo = h("button", { type: "button", class: "run-edit-undo", text: "Put every number back" });
      const values = f => edited[f] || original[f].data;
      const fillRows = () => {
        const f = tensor.value, s = original[f].shape, n = rowsOf(f);
        row.textContent = "";
        for (let i = 0; i < n; i++)
          row.append(h("option", { value: i, text: s.length === 1 ? "all" :
            f === "X.npy" ? `position ${i % s[s.length - 2]}` + (words && !words.queries && words.keys[i % s[s.length - 2]] ? ` (${words.keys[i % s[s.length - 2]]})` : "")
                          : `row ${i} (output ${i})` }));
        fillCells();
      };
      const fillCells = () => {
        const f = tensor.value, C = original[f].shape[original[f].shape.length - 1], at = Number(row.value) * C;
        cells.textContent = "";
        for (let c = 0; c < C; c++) {
          const input = h("input", { type: "number", step: "any", value: String(values(f)[at + c]),
                                     "data-index": at + c, "aria-label": `${f} [${row.value}, ${c}]` });
          input.addEventListener("change", () => {
            edited[f] = edited[f] || Float32Array.from(original[f].data);
            edited[f][at + c] = Number(input.value) || 0;
          });
          cells.append(h("label", {}, h("span", { text: String(c) }), input));
        }
      };
      tensor.addEventListener("change", fillRows);
      row.addEventListener("change", fillCells);
      undo.addEventListener("click", () => { for (const f in edited) delete edited[f]; fillCells(); });
      go.addEventListener("click", async () => {
        const files = {}, notes = [];
        for (const f of inputs) {
          files["case/" + f] = edited[f] ? writeNpy(original[f], edited[f]) : r.files["run/" + f];
          if (!edited[f]) continue;
          const C = original[f].shape[original[f].shape.length - 1];
          for (let i = 0; i < rowsOf(f); i++) {
            const now = edited[f].subarray(i * C, (i + 1) * C), was = original[f].data.subarray(i * C, (i + 1) * C);
            if (now.some((x, j) => x !== was[j]))
              notes.push(`# in case/${f}, ${original[f].shape.length === 1 ? "all" : "row " + i}: ${Array.from(now).join(" ")}`);
          }
        }
        // what --load must be told: the heads (and key/value heads) the case has
        const kept = args.filter((a, i) => a !== "--example" && args[i - 1] !== "--example"), load = [];
        const w = original["attn.npy"] || readNpy(r.files["run/attn.npy"]);
        const H = w.shape.length === 4 ? w.shape[1] : 1;
        if (has("--heads")) load.push("--heads", String(H));
        const q = original["q_proj.weight.npy"], k = original["k_proj.weight.npy"];
        if (has("--kv-heads") && q && k) load.push("--kv-heads", String(H * k.shape[0] / q.shape[0]));
        const argv = [name, ...kept, ...load, "--load", "case", "--dump", "run"];
        command.textContent = [commandLine([name, ...args, "--dump", "case"]),
          ...(notes.length ? notes : ["# (no number changed)"]), commandLine(argv)].join("\n");
        const s = await execute(argv, files);
        if (!s) return;
        const X = edited["X.npy"], D = original["X.npy"] && original["X.npy"].shape[2];
        const changed = (wd, t) => X && X.subarray(t * D, (t + 1) * D).some((x, j) => x !== original["X.npy"].data[t * D + j]) ? wd + "*" : wd;
        show(s, kept, words && (words.queries ? words : { keys: words.keys.map(changed) }), false);
        panel.dataset.edited = notes.length;
      });
      extra.append(h("fieldset", { class: "run-edit" },
        h("legend", { text: "Change the numbers the example set by hand" }),
        h("p", { class: "run-note", text: "The page keeps what the run above wrote with --dump. Change a row of one " +
          "of its files (for X, a position: its word part, then its position part), and the same program reads " +
          "them back with --load and draws the map again. A word marked * is a position you changed." }),
        h("div", { class: "run-row" }, h("label", {}, "file ", tensor), h("label", {}, "row ", row)),
        cells, h("div", { class: "run-row" }, go, undo)));
      fillRows();
    }
  }

  for (const panel of document.querySelectorAll("details.run-panel")) {
    if (panel.dataset.ready) continue;
    panel.dataset.ready = "1";
    setUp(panel).catch(e => {
      panel.querySelector(".run-body").append(h("p", { class: "run-error", text: String(e.message || e) }));
    });
  }
})();
