// The search results' snippets as a reader would read the page: Sphinx's search fetches each
// result's HTML and shows text of its main part, where the formulas are still TeX source
// (MathJax typesets them only in a browser that shows the page) and the article's header (its
// buttons' labels) comes first. Before Sphinx takes the text, formulas become "…" and the header,
// the hidden install cell and the equation numbers are left out.
if (typeof Search !== "undefined" && Search.htmlToText) {
  const sphinxText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    for (const node of page.querySelectorAll(".bd-header-article, .header-article-items, .eqno, .tag_remove-cell")) node.remove();
    for (const node of page.querySelectorAll(".math")) node.replaceWith(" … ");
    return sphinxText(page.documentElement.outerHTML, anchor);
  };
}
