/* tl-inspect HTML report. No framework and no network: every fact comes from data- attributes that
   the server-side templates escaped, so nothing here parses report data as code. */
(function () {
  "use strict";

  function numbers(value) {
    return (value || "").split(" ").filter(Boolean).map(Number);
  }

  function byId(id) {
    return document.getElementById(id);
  }

  // ---------------------------------------------------------------- kernel page: Python <-> CUDA
  var marked = [];

  function clearMarks() {
    marked.forEach(function (el) { el.classList.remove("hl", "sel", "current"); });
    marked = [];
  }

  function mark(el, cls) {
    if (el) {
      el.classList.add(cls);
      marked.push(el);
    }
    return el;
  }

  // scroll inside its pane only, so the other pane and the page stay where the reader left them;
  // `force` puts the row a third of the way down even when it is already visible
  function reveal(el, force) {
    if (!el) { return; }
    var pane = el.closest(".pane");
    if (!pane) { el.scrollIntoView({block: "nearest"}); return; }
    var box = el.getBoundingClientRect(), view = pane.getBoundingClientRect();
    if (force || box.top < view.top + 40 || box.bottom > view.bottom) {
      pane.scrollTop += box.top - view.top - pane.clientHeight / 3;
    }
  }

  function markCuda(lines) {
    var first = null;
    lines.forEach(function (n) {
      var row = mark(byId("cu-" + n), "hl");
      first = first || row;
    });
    return first;
  }

  function selectPython(row) {
    clearMarks();
    mark(row, "sel");
    reveal(markCuda(numbers(row.dataset.cuda)));
  }

  function selectCuda(row) {
    clearMarks();
    var py = byId("py-" + row.dataset.py);
    if (py) { markCuda(numbers(py.dataset.cuda)); }
    mark(row, "sel");
    reveal(mark(py, "hl"));
  }

  // the CUDA pane always moves to the finding's lines: they are what the finding is about, and the
  // pane otherwise sits at the #include boilerplate of line 1
  function selectFinding(finding) {
    clearMarks();
    mark(finding, "current");
    mark(byId("py-" + finding.dataset.line), "hl");
    reveal(markCuda(numbers(finding.dataset.cuda)), true);
  }

  function findings() {
    return Array.prototype.slice.call(document.querySelectorAll(".finding[id^='finding-']"));
  }

  var current = -1;

  function focusFinding(index) {
    var all = findings();
    if (!all.length) { return; }
    current = Math.max(0, Math.min(all.length - 1, index));
    var finding = all[current];
    finding.focus({preventScroll: true});
    reveal(finding);
    selectFinding(finding);
  }

  function onClick(event) {
    if (event.target.closest("a")) { return; }  // anchors keep their own behaviour
    var finding = event.target.closest(".finding[id^='finding-']");
    if (finding) {
      focusFinding(findings().indexOf(finding));
      return;
    }
    var row = event.target.closest("tr.line");
    if (!row) { return; }
    if (row.classList.contains("py")) { selectPython(row); } else { selectCuda(row); }
    history.replaceState(null, "", "#" + row.id);
  }

  function fromHash() {
    var target = location.hash ? byId(decodeURIComponent(location.hash.slice(1))) : null;
    if (target && target.classList.contains("finding")) {
      focusFinding(findings().indexOf(target));
    } else if (target && target.classList.contains("py")) {
      reveal(target); selectPython(target);
    } else if (target && target.classList.contains("cu")) {
      reveal(target); selectCuda(target);
    } else if (findings().length) {
      // first load: open at the first finding without taking the focus, so j still starts there
      var first = findings()[0];
      if (first.closest(".pane")) { reveal(first, true); }
      selectFinding(first);
    } else {
      var table = document.querySelector("table.source.py");
      reveal(table && byId("py-" + table.dataset.defLine), true);
    }
  }

  // ---------------------------------------------------------------- index: sort and filter
  function sortBy(th) {
    var table = th.closest("table");
    var column = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.dataset.sort === "number";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
      var order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function applyFilter() {
    var text = (byId("filter").value || "").toLowerCase();
    var show = byId("show").value;
    var visible = 0;
    document.querySelectorAll("#kernels tbody tr").forEach(function (row) {
      var ok = row.textContent.toLowerCase().indexOf(text) >= 0 &&
        (show === "all" || (show === "findings" && row.dataset.findings !== "0") ||
         (show === "error" && row.dataset.status !== "ok"));
      row.hidden = !ok;
      visible += ok ? 1 : 0;
    });
    byId("no-match").hidden = visible > 0;
  }

  // ---------------------------------------------------------------- keyboard (declared in markup)
  var actions = {
    next: function () { focusFinding(current + 1); },
    prev: function () { focusFinding(current < 0 ? 0 : current - 1); },
    help: function () {
      var help = byId("help");
      if (help.open) { help.close(); } else { help.showModal(); }
    }
  };

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.target.closest("input, select, textarea")) { return; }
    var target = Array.prototype.find.call(document.querySelectorAll("[data-shortcut]"), function (el) {
      return el.dataset.shortcut === event.key;
    });
    if (!target || (byId("help").open && event.key !== "?")) { return; }
    event.preventDefault();
    target.click();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-action]").forEach(function (el) {
      el.addEventListener("click", function () { actions[el.dataset.action](); });
    });
    document.addEventListener("keydown", onKey);
    if (document.body.classList.contains("kernel")) {
      document.addEventListener("click", onClick);
      fromHash();
    }
    document.querySelectorAll("table.sortable th[data-sort]").forEach(function (th) {
      th.addEventListener("click", function () { sortBy(th); });
    });
    if (byId("filter")) {
      byId("filter").addEventListener("input", applyFilter);
      byId("show").addEventListener("change", applyFilter);
    }
  });
}());
