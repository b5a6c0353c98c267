// The tables and figures of a built page that the reader cannot see in full, one line each
// (tests/test_browser.py evaluates this function in the page).
//
// A table, figure or output block must lie within the text column: not past its edges, not clipped
// by a scrolling box, and an output block must not scroll sideways. With `strict` (a desktop window)
// that holds for every one of them. Without it (a phone), a result table in
// <div class="setfuncs-table"> (see css/book.css) may scroll inside its wrapper, if the wrapper shows
// the scroll cue (its shadow gradients), lies within the window and is covered by nothing; the
// compact findings table (<div class="verdict-table">) must still fit.
(strict) => {
  const article = document.querySelector("article.bd-article");
  const style = getComputedStyle(article);
  const column = {
    left: article.getBoundingClientRect().left + parseFloat(style.paddingLeft),
    right: article.getBoundingClientRect().right - parseFloat(style.paddingRight),
  };
  const window_ = { left: 0, right: document.documentElement.clientWidth };
  const problems = [];
  const describe = (element) => {
    const header = () => Array.from(element.rows[0]?.cells ?? [], (cell) => cell.textContent);
    const label = element.tagName !== "TABLE" ? element.getAttribute("alt") ?? ""
      : element.caption?.textContent ?? header().join(" | ");
    const section = element.closest("section[id]")?.id ?? "";
    return `${element.tagName.toLowerCase()} "${label.trim().slice(0, 60)}" in section #${section}`;
  };
  const within = (box, bounds) => box.left >= bounds.left - 1 && box.right <= bounds.right + 1;
  const clipper = (element) => {
    for (let e = element.parentElement; e && e !== article; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== "visible") return e;
    }
    return null;
  };
  const uncovered = (element) => {
    element.scrollIntoView({ block: "center", behavior: "instant" });
    const box = element.getBoundingClientRect();
    const y = (Math.max(box.top, 0) + Math.min(box.bottom, window.innerHeight)) / 2;
    return [box.left + 2, (box.left + box.right) / 2, box.right - 2].every((x) => {
      const hit = document.elementFromPoint(x, y);
      return hit !== null && element.contains(hit);
    });
  };
  for (const element of article.querySelectorAll("table, img, figure")) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue; // a frame of a slider that is not shown
    const wrapper = element.tagName === "TABLE" && !strict ? element.closest(".setfuncs-table") : null;
    if (wrapper === null) {
      if (!within(box, column)) problems.push(`${describe(element)} leaves the column`);
      const clip = clipper(element);
      if (clip && !within(box, clip.getBoundingClientRect())) {
        problems.push(`${describe(element)} is clipped by a scrolling ${clip.className}`);
      }
      continue;
    }
    const wrapperBox = wrapper.getBoundingClientRect();
    const wrapperStyle = getComputedStyle(wrapper);
    if (!within(box, wrapperBox)) {
      const scrolls = ["auto", "scroll"].includes(wrapperStyle.overflowX);
      if (!scrolls || !wrapperStyle.backgroundImage.includes("gradient")) {
        const shown = `overflow-x ${wrapperStyle.overflowX}, background ${wrapperStyle.backgroundImage.slice(0, 30)}`;
        problems.push(`${describe(element)} is cut off without a scroll cue (${shown}; theme "${document.documentElement.dataset.theme}")`);
      }
    }
    if (!within(wrapperBox, window_)) problems.push(`${describe(element)} leaves the window`);
    const clip = clipper(wrapper);
    if (clip && !within(wrapperBox, clip.getBoundingClientRect())) {
      problems.push(`${describe(element)} is clipped by a scrolling ${clip.className}`);
    }
    if (!uncovered(wrapper)) problems.push(`${describe(element)} is partly covered`);
  }
  for (const output of article.querySelectorAll("div.cell_output .output")) {
    const box = output.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const label = `output "${output.textContent.trim().slice(0, 40)}" in section #${output.closest("section[id]")?.id ?? ""}`;
    if (!within(box, column)) problems.push(`${label} leaves the column`);
    for (const e of [output, ...output.querySelectorAll("pre, div")]) {
      if (e.closest(".setfuncs-table") && !strict) continue;
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible") {
        problems.push(`${label} scrolls sideways (${e.scrollWidth} px in ${e.clientWidth} px)`);
        break;
      }
    }
  }
  return problems;
}
