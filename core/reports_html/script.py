"""The report's one script: the item table, searched, sorted and paged over the inline JSON data.

It builds every cell with ``textContent`` (never ``innerHTML``), so data cannot become markup even
if it got past the escaping; it reads its data with ``JSON.parse`` from a non-executable
``<script type="application/json">`` block, and is allowed to run by its SHA-256 hash in the page's
Content Security Policy (computed when the page is written: :func:`dialjudge.core.reports_html.page.csp`).
Only the rows of one page are in the document at a time, so a 100,000-item run stays usable.
"""

SCRIPT = r"""
(function () {
  "use strict";
  var source = document.getElementById("items-data");
  var root = document.getElementById("items-browser");
  if (!source || !root) { return; }
  var data = JSON.parse(source.textContent);
  var cols = data.columns, rows = data.rows, contexts = data.contexts;
  var visible = [];
  cols.forEach(function (c, i) { if (c.show) { visible.push(i); } });
  var search = root.querySelector("input[type=search]");
  var sizeSelect = root.querySelector("select.page-size");
  var count = root.querySelector(".count");
  var headRow = root.querySelector("thead tr");
  var body = root.querySelector("tbody");
  var prev = root.querySelector("button.prev");
  var next = root.querySelector("button.next");
  var where = root.querySelector(".where");
  var natural = rows.map(function (_, i) { return i; });
  var sorted = natural;
  var shown = natural;
  var haystack = null;
  var expanded = {};
  var state = { query: "", column: -1, direction: 1, page: 0, size: 25 };

  function text(column, value) {
    if (value === null || value === undefined || value === "") { return "\u2013"; }
    if (column.kind === "num") { return value.toFixed(column.digits === undefined ? 3 : column.digits); }
    if (column.kind === "flags") { return value.length ? value.join(", ") : "\u2013"; }
    if (column.kind === "context") { return contexts[value]; }
    return String(value);
  }

  function searchable(i) {
    var row = rows[i], parts = [];
    for (var c = 0; c < cols.length; c++) {
      if (cols[c].kind !== "num") { parts.push(text(cols[c], row[c])); }
    }
    return parts.join("\n").toLowerCase();
  }

  function key(value, kind) {
    if (value === null || value === undefined) { return null; }
    if (kind === "flags") { return value.length; }
    if (kind === "context") { return contexts[value]; }
    return value;
  }

  function resort() {
    if (state.column < 0) { sorted = natural; return; }
    var c = state.column, kind = cols[c].kind, d = state.direction;
    sorted = natural.slice().sort(function (a, b) {
      var x = key(rows[a][c], kind), y = key(rows[b][c], kind);
      if (x === y) { return a - b; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      return (x < y ? -1 : 1) * d;
    });
  }

  function refilter() {
    var terms = state.query.toLowerCase().split(/\s+/).filter(function (t) { return t.length > 0; });
    if (!terms.length) { shown = sorted; return; }
    if (haystack === null) { haystack = natural.map(searchable); }
    shown = sorted.filter(function (i) {
      for (var t = 0; t < terms.length; t++) { if (haystack[i].indexOf(terms[t]) < 0) { return false; } }
      return true;
    });
  }

  function cell(tag, column, value) {
    var td = document.createElement(tag);
    if (column.kind === "num") { td.className = "num"; }
    if (column.wide) { td.className = "text"; }
    if (column.kind === "flags" && value && value.length) {
      value.forEach(function (flag) {
        var span = document.createElement("span");
        span.className = "flag";
        span.textContent = flag;
        td.appendChild(span);
      });
    } else {
      td.textContent = text(column, value);
    }
    return td;
  }

  function details(i) {
    var tr = document.createElement("tr");
    tr.className = "details";
    var td = document.createElement("td");
    td.colSpan = visible.length;
    var dl = document.createElement("dl");
    dl.className = "kv";
    cols.forEach(function (column, c) {
      var dt = document.createElement("dt");
      dt.textContent = column.label;
      var dd = document.createElement("dd");
      dd.textContent = text(column, rows[i][c]);
      dl.appendChild(dt);
      dl.appendChild(dd);
    });
    td.appendChild(dl);
    tr.appendChild(td);
    return tr;
  }

  function draw() {
    var pages = Math.max(1, Math.ceil(shown.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * state.size, end = Math.min(shown.length, start + state.size);
    var fragment = document.createDocumentFragment();
    for (var k = start; k < end; k++) {
      var i = shown[k];
      var tr = document.createElement("tr");
      tr.className = "item";
      tr.tabIndex = 0;
      tr.setAttribute("data-row", String(i));
      tr.setAttribute("aria-expanded", expanded[i] ? "true" : "false");
      visible.forEach(function (c) { tr.appendChild(cell("td", cols[c], rows[i][c])); });
      fragment.appendChild(tr);
      if (expanded[i]) { fragment.appendChild(details(i)); }
    }
    body.textContent = "";
    body.appendChild(fragment);
    count.textContent = shown.length.toLocaleString("en") + " of " + rows.length.toLocaleString("en") + " items";
    where.textContent = "Page " + (state.page + 1).toLocaleString("en") + " of " + pages.toLocaleString("en");
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  function header() {
    visible.forEach(function (c) {
      var th = document.createElement("th");
      th.textContent = cols[c].label;
      th.tabIndex = 0;
      th.scope = "col";
      if (cols[c].kind === "num") { th.className = "num"; }
      th.setAttribute("data-column", String(c));
      headRow.appendChild(th);
    });
  }

  function sortBy(c) {
    state.direction = state.column === c ? -state.direction : (cols[c].kind === "num" || cols[c].kind === "flags" ? -1 : 1);
    state.column = c;
    headRow.querySelectorAll("th").forEach(function (th) {
      var mine = Number(th.getAttribute("data-column")) === c;
      if (mine) { th.setAttribute("aria-sort", state.direction > 0 ? "ascending" : "descending"); }
      else { th.removeAttribute("aria-sort"); }
    });
    resort();
    refilter();
    state.page = 0;
    draw();
  }

  var pending = null;
  search.addEventListener("input", function () {
    if (pending !== null) { clearTimeout(pending); }
    pending = setTimeout(function () {
      pending = null;
      state.query = search.value;
      refilter();
      state.page = 0;
      draw();
    }, 150);
  });
  sizeSelect.addEventListener("change", function () {
    state.size = Number(sizeSelect.value) || 25;
    state.page = 0;
    draw();
  });
  prev.addEventListener("click", function () { state.page -= 1; draw(); });
  next.addEventListener("click", function () { state.page += 1; draw(); });
  headRow.addEventListener("click", function (event) {
    var th = event.target.closest("th");
    if (th) { sortBy(Number(th.getAttribute("data-column"))); }
  });
  headRow.addEventListener("keydown", function (event) {
    var th = event.target.closest("th");
    if (th && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); sortBy(Number(th.getAttribute("data-column"))); }
  });
  function toggle(tr) {
    var i = Number(tr.getAttribute("data-row"));
    if (expanded[i]) { delete expanded[i]; } else { expanded[i] = true; }
    draw();
    var again = body.querySelector('tr.item[data-row="' + i + '"]');
    if (again) { again.focus(); }
  }
  body.addEventListener("click", function (event) {
    var tr = event.target.closest("tr.item");
    if (tr) { toggle(tr); }
  });
  body.addEventListener("keydown", function (event) {
    var tr = event.target.closest("tr.item");
    if (tr && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); toggle(tr); }
  });
  root.hidden = false;
  header();
  draw();
})();
"""
