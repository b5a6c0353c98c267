// Chapter 4: max, LSE and sum of a pair (x1, x2) on the square [-λ, λ]², at any half-width λ.
// Filled contours (twelve equal bands of each panel's own range) show LSE turn from max's L shapes
// (large λ) into sum's straight diagonals (small λ); a point the reader drags reads all three off.
import { AGGREGATE, button, contourImage, draggable, fmt, h, plot, readout, root, s, slider } from "./lib.js";

const PANELS = [["max", "max"], ["lse", "LΣE"], ["sum", "sum"]];

export default {
  render({ model, el }) {
    const state = structuredClone(model.get("state"));
    const top = root(el, "max, LSE and sum on a square of half-width lambda");
    const areas = PANELS.map(([key, title]) => {
      const area = plot({ width: 260, height: 250, x: [-1, 1], y: [-1, 1], margin: { left: 40, right: 18, top: 22, bottom: 30 },
        label: `filled contours of ${title} of two inputs` });
      area.image = s("image", { preserveAspectRatio: "none" });
      area.title = s("text", { x: 150, y: 15, "text-anchor": "middle" });
      area.marker = s("circle", { r: 7, fill: "#d35400", stroke: "white", "stroke-width": 2 });
      area.layer.append(area.image, area.title, area.marker);
      return { key, title, area };
    });
    const readouts = Object.fromEntries(PANELS.map(([key, title]) => [key, readout(key, `${title} =`)]));
    const position = readout("point", "at (x₁, x₂) =");
    const draw = () => {
      const w = state.half_width;
      const [u, v] = state.point;
      for (const { key, title, area } of areas) {
        area.x = [-w, w]; area.y = [-w, w];
        const { href } = contourImage((a, b) => AGGREGATE[key]([a, b]), area.x, area.y, { levels: state.levels });
        const x0 = area.sx(-w), y0 = area.sy(w);
        Object.entries({ href, x: x0, y: y0, width: area.sx(w) - x0, height: area.sy(-w) - y0 })
          .forEach(([k, value]) => area.image.setAttribute(k, value));
        area.title.textContent = `${title} on [−${fmt(w)}, ${fmt(w)}]²`;
        area.axes({ ticks: 2 });
        area.marker.setAttribute("cx", area.sx(u * w));
        area.marker.setAttribute("cy", area.sy(v * w));
        readouts[key].set(AGGREGATE[key]([u * w, v * w]));
      }
      position.set(u * w, `(${fmt(u * w)}, ${fmt(v * w)})`);
      model.set("state", { ...state });
      model.save_changes();
    };
    for (const { area } of areas) {
      draggable(area, area.marker, {
        label: "the point (x1, x2); arrow keys move it",
        get: () => [state.point[0] * state.half_width, state.point[1] * state.half_width],
        onMove: ([a, b]) => { state.point = [a / state.half_width, b / state.half_width]; draw(); },
      });
    }
    const width = slider({ name: "half_width", label: "half-width λ", min: 0.1, max: 100, log: true,
      value: state.half_width, onInput: (value) => { state.half_width = value; draw(); } });
    top.append(
      h("div", { class: "xp-controls" }, width,
        button("λ = 1", () => { state.half_width = 1; width.set(1); draw(); })),
      h("div", { class: "xp-panels" }, ...areas.map(({ area }) => area.svg)),
      h("div", { class: "xp-readouts" }, position, ...Object.values(readouts)),
      h("p", { class: "xp-note" }, "Drag the orange point (or focus it and use the arrow keys) to read the three aggregations there."),
    );
    draw();
  },
};
