// Sorting of tables and filtering of MIRAI's queries. No data reaches the page through this
// script: it only reorders and hides rows the page already holds, reads cells' text and
// data-* attributes, and writes counts with textContent (never innerHTML).
"use strict";

function sortKey(cell) {
  const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  const number = Number(raw);
  return raw !== "" && !Number.isNaN(number) ? { n: number } : { s: raw };
}

function compare(a, b) {
  if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
  if (a.n !== undefined) return -1; // numbers before blanks and text
  if (b.n !== undefined) return 1;
  return a.s.localeCompare(b.s);
}

function sortBy(table, th) {
  const column = Array.prototype.indexOf.call(th.parentElement.children, th);
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  for (const other of th.parentElement.children) {
    if (other.hasAttribute("aria-sort")) other.setAttribute("aria-sort", "none");
  }
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows).map((row) => [sortKey(row.cells[column]), row]);
  rows.sort((x, y) => (ascending ? 1 : -1) * compare(x[0], y[0]));
  for (const [, row] of rows) body.appendChild(row);
}

function filterRows(form) {
  const table = document.getElementById(form.dataset.filter);
  const want = (name) => (form.elements[name] ? form.elements[name].value.trim() : "");
  const subject = want("subject").toUpperCase();
  const object = want("object").toUpperCase();
  const relation = want("relation");
  const horizon = want("horizon");
  let shown = 0;
  const rows = table.tBodies[0].rows;
  for (const row of rows) {
    const d = row.dataset;
    const keep =
      (!subject || d.subject === subject) &&
      (!object || d.object === object) &&
      (!horizon || d.horizon === horizon) &&
      (!relation || d.relation.split(" ").some((code) => code.startsWith(relation)));
    row.hidden = !keep;
    if (keep) shown += 1;
  }
  form.querySelector("output").textContent = `${shown} of ${rows.length} queries`;
}

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.sortable")) {
    for (const button of table.querySelectorAll("thead th button")) {
      button.addEventListener("click", () => sortBy(table, button.parentElement));
    }
  }
  for (const form of document.querySelectorAll("form.filter")) {
    form.addEventListener("submit", (event) => event.preventDefault());
    form.addEventListener("input", () => filterRows(form));
    form.addEventListener("change", () => filterRows(form));
  }
});
