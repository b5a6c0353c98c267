// Chapter 8: a population of particles the reader drags, adds and removes (or draws anew from a
// seed, at any size), its exact minimal enclosing circle by Welzl's algorithm (welzl.js) with the
// particles that fix it ringed, and the circles the chapter's trained Deep Sets predict for it
// (deepset.js's forward pass of their exported weights), each read out as centre and radius.
import { button, draggable, fmt, h, mulberry32, plot, readout, root, s, saver, slider } from "./lib.js";
import { forward } from "./deepset.js";
import { welzlCircle } from "./welzl.js";
import { circlePopulation, circleView } from "./circle_data.js";

const CIRCLE_INNER = 370;
const CIRCLE_MARGIN = { left: 58, right: 10, top: 10, bottom: 34 };

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const nets = state.models;
    let population = state.population ?? circlePopulation(state.seed, state.size, state.mixture);
    let selected = null;
    const extra = mulberry32(state.seed + 7919);      // where the "add" button puts a particle

    const top = root(el, "minimal enclosing circle of a population and the trained models' predictions");
    const first = welzlCircle(population);
    const view = circleView(first.center, first.radius, state.min_half);
    const area = plot({ width: CIRCLE_INNER + CIRCLE_MARGIN.left + CIRCLE_MARGIN.right,
      height: CIRCLE_INNER + CIRCLE_MARGIN.top + CIRCLE_MARGIN.bottom, x: view.x, y: view.y, margin: CIRCLE_MARGIN,
      label: "the particles of a population in the plane, their minimal enclosing circle (black, its support "
        + "particles ringed), the sample mean (blue cross) and each model's predicted circle (dashed)" });
    const clipId = `xp-circle-clip-${Math.random().toString(36).slice(2)}`;
    const box = { x: CIRCLE_MARGIN.left, y: CIRCLE_MARGIN.top, width: CIRCLE_INNER, height: CIRCLE_INNER };
    const background = s("rect", { ...box, fill: "transparent", class: "xp-circle-background" });
    const clipped = s("g", { "clip-path": `url(#${clipId})` });
    const exact = s("circle", { fill: "none", stroke: "currentColor", "stroke-width": 2 });
    const exactCentre = s("circle", { r: 3, fill: "currentColor" });
    const mean = s("path", { stroke: "#1f77b4", "stroke-width": 2.5, fill: "none" });
    const predicted = nets.map((net) => ({
      ring: s("circle", { fill: "none", stroke: net.colour, "stroke-width": 2.5, "stroke-dasharray": "7 4" }),
      centre: s("path", { stroke: net.colour, "stroke-width": 2.5, fill: "none" }),
    }));
    const rings = s("g");
    const dots = s("g");
    clipped.append(background, ...predicted.map((p) => p.ring), exact, rings, exactCentre, mean,
      ...predicted.map((p) => p.centre), dots);
    area.layer.append(s("defs", {}, s("clipPath", { id: clipId }, s("rect", box))), clipped);

    // read-outs, a table: the exact circle, then per model its circle and its squared error
    const exactRow = { cx: readout("cx", ""), cy: readout("cy", ""), r: readout("r", "") };
    const rows = nets.map((net) => ({
      cx: readout(`${net.key}_cx`, ""), cy: readout(`${net.key}_cy`, ""), r: readout(`${net.key}_r`, ""),
      error: readout(`${net.key}_error`, ""),
    }));
    const swatch = (colour, dashed) => s("svg", { width: 28, height: 12, "aria-hidden": "true",
      style: "display:inline; vertical-align:middle" },
      s("line", { x1: 1, y1: 6, x2: 27, y2: 6, stroke: colour, "stroke-width": 2.5, "stroke-dasharray": dashed ? "7 4" : null }));
    const cell = (content, head = false, align = head ? "left" : "right") => h(head ? "th" : "td",
      { style: `padding: 0.2rem 0.5rem; text-align: ${align}` }, content);
    // a row's name: its swatch kept with the first word, the rest free to wrap
    const name = (colour, dashed, label) => {
      const [first, ...rest] = label.split(" ");
      return h("span", {}, h("span", { style: "white-space: nowrap" }, swatch(colour, dashed), ` ${first}`),
        rest.length ? ` ${rest.join(" ")}` : "");
    };
    const table = h("table", { class: "xp-circle-readouts",
      style: "border-collapse: collapse; font-variant-numeric: tabular-nums; align-self: start; flex: 1 1 22rem" },
      h("thead", {}, h("tr", {}, ...["circle", "centre x", "centre y", "radius", "squared error"]
        .map((t, k) => cell(h("span", { style: "white-space: nowrap" }, t), true, k ? "right" : "left")))),
      h("tbody", {},
        h("tr", {}, cell(name("currentColor", false, "exact (Welzl)"), true),
          ...Object.values(exactRow).map((r) => cell(r)), cell("")),
        ...nets.map((net, k) => h("tr", {}, cell(name(net.colour, true, net.label), true),
          ...Object.values(rows[k]).map((r) => cell(r))))));

    let nodes = [];
    const sx = area.sx, sy = area.sy;
    const scale = () => CIRCLE_INNER / (area.x[1] - area.x[0]);
    const cross = (x, y, size) => `M${sx(x) - size},${sy(y) - size}L${sx(x) + size},${sy(y) + size}`
      + `M${sx(x) - size},${sy(y) + size}L${sx(x) + size},${sy(y) - size}`;
    const plus = (x, y, size) => `M${sx(x) - size},${sy(y)}L${sx(x) + size},${sy(y)}M${sx(x)},${sy(y) - size}L${sx(x)},${sy(y) + size}`;
    const save = saver(model, state, 200);  // the weights travel with the state

    const draw = () => {
      const circle = welzlCircle(population);
      exact.setAttribute("cx", sx(circle.center[0]));
      exact.setAttribute("cy", sy(circle.center[1]));
      exact.setAttribute("r", circle.radius * scale());
      exactCentre.setAttribute("cx", sx(circle.center[0]));
      exactCentre.setAttribute("cy", sy(circle.center[1]));
      exactRow.cx.set(circle.center[0]);
      exactRow.cy.set(circle.center[1]);
      exactRow.r.set(circle.radius);
      rings.replaceChildren(...circle.support.map((i) => s("circle", { cx: sx(population[i][0]), cy: sy(population[i][1]),
        r: 9, fill: "none", stroke: "currentColor", "stroke-width": 2 })));
      const n = population.length;
      mean.setAttribute("d", cross(population.reduce((a, p) => a + p[0], 0) / n, population.reduce((a, p) => a + p[1], 0) / n, 6));
      nets.forEach((net, k) => {
        const [cx, cy, r] = forward(net.weights, population).output;
        predicted[k].ring.setAttribute("cx", sx(cx));
        predicted[k].ring.setAttribute("cy", sy(cy));
        predicted[k].ring.setAttribute("r", Math.max(r, 0) * scale());
        predicted[k].centre.setAttribute("d", plus(cx, cy, 6));
        rows[k].cx.set(cx);
        rows[k].cy.set(cy);
        rows[k].r.set(r);
        rows[k].error.set((cx - circle.center[0]) ** 2 + (cy - circle.center[1]) ** 2 + (r - circle.radius) ** 2);
      });
      population.forEach((p, i) => {
        nodes[i].setAttribute("cx", sx(p[0]));
        nodes[i].setAttribute("cy", sy(p[1]));
        nodes[i].setAttribute("stroke", i === selected ? "#d35400" : "white");
        nodes[i].setAttribute("stroke-width", i === selected ? 3 : 1);
        nodes[i].setAttribute("aria-valuetext", `particle ${i + 1} at (${fmt(p[0])}, ${fmt(p[1])})`);
      });
      save();
    };

    const edited = () => {
      // the reader's population replaces the seed's; the size slider shows its size
      state.population = population.map((p) => p.slice());
      state.size = population.length;
      size.set(population.length);
    };
    const remove = (i) => {
      if (population.length <= 1) return;
      population.splice(i, 1);
      selected = null;
      edited();
      makeParticles();
      draw();
    };
    const add = ([x, y]) => {
      population.push([x, y]);
      selected = population.length - 1;
      edited();
      makeParticles();
      draw();
    };
    const makeParticles = () => {
      nodes = population.map((_, i) => {
        const node = s("circle", { r: 6, fill: "#7f7f7f", stroke: "white", "stroke-width": 1 });
        draggable(area, node, {
          label: `particle ${i + 1}: drag it or use the arrow keys; Delete removes it`,
          get: () => population[i],
          onMove: (p) => { population[i] = p; selected = i; edited(); draw(); },
        });
        node.addEventListener("focus", () => { selected = i; draw(); });
        node.addEventListener("keydown", (event) => {
          if (event.key !== "Delete" && event.key !== "Backspace") return;
          event.preventDefault();
          remove(i);
          nodes[Math.min(i, nodes.length - 1)].focus();     // the keyboard stays on a particle
        });
        return node;
      });
      dots.replaceChildren(...nodes);
    };
    background.addEventListener("click", (event) => add(area.pointer(event)));

    const redraw = () => {
      // a new population from the seed and size: the view fits its circle, the reader's edits go
      state.population = null;
      population = circlePopulation(state.seed, state.size, state.mixture);
      selected = null;
      const circle = welzlCircle(population);
      const fit = circleView(circle.center, circle.radius, state.min_half);
      area.x.splice(0, 2, ...fit.x);
      area.y.splice(0, 2, ...fit.y);
      area.axes({ ticks: 4, xlabel: "x", ylabel: "y" });
      makeParticles();
      draw();
    };
    const size = slider({ name: "size", label: "particles N", min: 1, max: state.max_size, step: 1, value: state.size,
      format: (v) => String(Math.round(v)), onInput: (v) => { state.size = Math.round(v); redraw(); } });
    const seed = slider({ name: "seed", label: "seed", min: 0, max: state.max_seed, step: 1, value: state.seed,
      format: (v) => String(Math.round(v)), onInput: (v) => { state.seed = Math.round(v); redraw(); } });
    const addButton = button("add a particle", () => {
      const u = extra(), v = extra();
      add([area.x[0] + (0.15 + 0.7 * u) * (area.x[1] - area.x[0]), area.y[0] + (0.15 + 0.7 * v) * (area.y[1] - area.y[0])]);
    });
    const removeButton = button("remove the selected particle", () => remove(selected ?? population.length - 1));

    area.axes({ ticks: 4, xlabel: "x", ylabel: "y" });
    area.svg.style.flex = "0 1 440px";
    makeParticles();
    top.append(
      h("div", { class: "xp-controls" }, size, seed),
      h("div", { class: "xp-controls" }, addButton, removeButton),
      h("div", { class: "xp-panels" }, area.svg, table),
      h("p", { class: "xp-note" }, "Drag a particle (or focus it and use the arrow keys; Delete removes it); click an "
        + "empty spot to add one. The sizes and seeds draw new populations from the task's mixture."),
    );
    draw();
  },
};
