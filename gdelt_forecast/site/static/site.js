// Sorting of tables, and filtering and paging of MIRAI's queries. Data reaches the page through
// this script only as text: it reorders rows the page holds and builds the queries' rows with
// createElement and textContent, never innerHTML.
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

// MIRAI's queries: the page holds the first page of them, window.SITE_DATA (its split's data
// file) all of them; the filter keeps those that match and shows a page of them at a time.
function matching(form, rows) {
  const want = (name) => form.elements[name].value.trim();
  const subject = want("subject").toUpperCase();
  const object = want("object").toUpperCase();
  const relation = want("relation");
  const horizon = want("horizon");
  return rows.filter(
    ([, , h, , s, , o, , codes]) =>
      (!subject || s === subject) &&
      (!object || o === object) &&
      (!horizon || String(h) === horizon) &&
      (!relation || codes.some((code) => code.startsWith(relation))),
  );
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function country(code, name) {
  const td = element("td");
  const abbr = element("abbr", code);
  abbr.title = name;
  td.appendChild(abbr);
  return td;
}

function queryRow(row, relations) {
  const [id, date, horizon, cutoff, s, sName, o, oName, codes, mentions] = row;
  const tr = element("tr");
  const idCell = element("td");
  idCell.appendChild(element("code", id));
  const answer = element("td");
  const list = element("ul", undefined, "codes");
  for (const code of codes) {
    const item = element("li");
    item.append(element("code", code), ` ${relations[code] || "?"}`);
    list.appendChild(item);
  }
  answer.appendChild(list);
  tr.append(idCell, element("td", date), element("td", horizon, "n"), element("td", cutoff),
    country(s, sName), country(o, oName), answer, element("td", mentions, "n"));
  return tr;
}

function showQueries(form, data, state) {
  const found = matching(form, data.rows);
  const size = data.page_size;
  const pages = Math.max(1, Math.ceil(found.length / size));
  state.page = Math.min(Math.max(state.page, 0), pages - 1);
  const first = state.page * size;
  const shown = found.slice(first, first + size);
  const table = document.getElementById(form.dataset.filter);
  table.tBodies[0].replaceChildren(...shown.map((row) => queryRow(row, data.relations)));
  let text = `${found.length} of ${data.rows.length} queries`;
  if (found.length > size) text += `; ${first + 1}–${first + shown.length} shown`;
  form.querySelector("output").textContent = text;
  const pager = document.querySelector("nav.pager");
  pager.hidden = pages < 2;
  pager.querySelector('[data-step="-1"]').disabled = state.page === 0;
  pager.querySelector('[data-step="1"]').disabled = state.page === pages - 1;
}

function filterQueries(form, data) {
  const state = { page: 0 };
  const refresh = () => {
    state.page = 0;
    showQueries(form, data, state);
  };
  form.addEventListener("input", refresh);
  form.addEventListener("change", refresh);
  for (const button of document.querySelectorAll("nav.pager button")) {
    button.addEventListener("click", () => {
      state.page += Number(button.dataset.step);
      showQueries(form, data, state);
    });
  }
  showQueries(form, data, state);
}

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.sortable")) {
    for (const button of table.querySelectorAll("thead th button")) {
      button.addEventListener("click", () => sortBy(table, button.parentElement));
    }
  }
  for (const form of document.querySelectorAll("form.filter")) {
    form.addEventListener("submit", (event) => event.preventDefault());
    if (window.SITE_DATA) filterQueries(form, window.SITE_DATA);
  }
});
