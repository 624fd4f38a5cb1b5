/* perfprof ui and report: draws each panel's chart from the figure its page carries (JSON data,
   never markup), and, in the report file, shows one view at a time and sorts and filters the
   paged tables in the page; on the Trace view, opens the run's trace in Perfetto UI. Text from the
   run is only ever read or moved, never parsed as HTML. */
(function () {
  "use strict";

  var PERFETTO = "https://ui.perfetto.dev";

  /* Perfetto UI's postMessage protocol: PING the new tab until it answers PONG (it is ready),
     then post the trace's bytes. The tab is opened at the click, before the download, so that
     no popup blocker takes it for an unrequested window. */
  function openInPerfetto(button) {
    var viewer = window.open(PERFETTO);
    fetch(button.dataset.url).then(function (response) {
      if (!response.ok) { throw new Error("the trace download failed: " + response.status); }
      return response.arrayBuffer();
    }).then(function (buffer) {
      var ping = setInterval(function () { viewer.postMessage("PING", PERFETTO); }, 50);
      window.addEventListener("message", function answered(event) {
        if (event.origin !== PERFETTO || event.data !== "PONG") { return; }
        clearInterval(ping);
        window.removeEventListener("message", answered);
        viewer.postMessage({perfetto: {buffer: buffer, title: button.dataset.title, url: location.href}}, PERFETTO);
      });
    });
  }

  function drawCharts(root) {
    root.querySelectorAll("script.chart-data").forEach(function (data) {
      if (data.dataset.drawn) { return; }
      data.dataset.drawn = "1";
      var figure = JSON.parse(data.textContent);
      var target = document.getElementById(data.dataset.target);
      Plotly.newPlot(target, figure.data, figure.layout, {displaylogo: false, responsive: true});
      var rangeLink = data.closest(".panel").querySelector("a.range-link");
      if (rangeLink) { target.on("plotly_relayout", function (event) { followRange(rangeLink, event); }); }
    });
  }

  /* A chart zoomed into (its x axis in ms from the run's start) points its link at the events of
     that range; zoomed out, at all of them. */
  function followRange(link, event) {
    var from = event["xaxis.range[0]"], to = event["xaxis.range[1]"];
    if (from === undefined || to === undefined) {
      if (event["xaxis.autorange"]) { link.href = link.dataset.base; }
      return;
    }
    link.href = link.dataset.base + "?from=" + Math.max(0, from).toFixed(3) + "&to=" + Math.max(0, to).toFixed(3);
  }

  /* The report: every view is a section; the one named by the URL's fragment is shown. Charts are
     drawn when their view is first shown (Plotly cannot size a chart in a hidden element). */
  function showView() {
    var views = document.querySelectorAll("section.view");
    var wanted = location.hash.slice(1) || (views.length ? views[0].id : "");
    views.forEach(function (view) {
      view.hidden = view.id !== wanted;
      if (!view.hidden) { drawCharts(view); }
    });
    document.querySelectorAll("nav.views a[data-view]").forEach(function (link) {
      if (link.dataset.view === wanted) { link.setAttribute("aria-current", "page"); }
      else { link.removeAttribute("aria-current"); }
    });
  }

  function cellKey(row, index, numeric) {
    var value = row.cells[index].dataset.value;
    if (value === "") { return null; }
    return numeric ? Number(value) : value.toLowerCase();
  }

  function sortRows(table, index, numeric, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
      if (x === null || y === null) { return (x === null) - (y === null); }  /* empty cells last */
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function clientTables() {
    document.querySelectorAll("table.client-sorted").forEach(function (table) {
      var headers = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(headers, function (header, index) {
        var button = header.querySelector("button.sort");
        var numeric = header.classList.contains("num");
        button.addEventListener("click", function () {
          var descending = header.dataset.sorted !== "desc";
          Array.prototype.forEach.call(headers, function (other) { delete other.dataset.sorted; });
          header.dataset.sorted = descending ? "desc" : "asc";
          sortRows(table, index, numeric, descending);
        });
      });
      var panel = table.closest(".panel");
      var search = panel.querySelector("input.client-search");
      var count = panel.querySelector(".count");
      search.addEventListener("input", function () {
        var needle = search.value.toLowerCase(), shown = 0;
        Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
          var match = Array.prototype.some.call(row.cells, function (cell) {
            return cell.classList.contains("text") && cell.textContent.toLowerCase().indexOf(needle) >= 0;
          });
          row.hidden = !match;
          shown += match ? 1 : 0;
        });
        count.textContent = shown.toLocaleString("en") + " rows";
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (document.querySelector("section.view")) {
      window.addEventListener("hashchange", showView);
      showView();
      clientTables();
    } else {
      drawCharts(document);
    }
    document.querySelectorAll("button.open-perfetto").forEach(function (button) {
      button.addEventListener("click", function () { openInPerfetto(button); });
    });
  });
}());
