// Draws the Plotly figures built on the server (triage/analytics.py). Each chart is
// <div class="chart" data-figure="ID"> next to <script type="application/json" id="ID"> written by
// Django's json_script filter (escape-safe). A click on a bar follows its customdata link: the
// triage queue filtered to the failures behind that bar.
(function () {
  if (!window.Plotly) return;
  var config = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"]};
  function draw(el) {
    var source = document.getElementById(el.getAttribute("data-figure"));
    if (!source) return;
    var fig = JSON.parse(source.textContent);
    Plotly.newPlot(el, fig.data, fig.layout, config).then(function () {
      el.setAttribute("data-ready", "1");
    });
    el.on("plotly_click", function (event) {
      var point = event && event.points && event.points[0];
      var url = point && point.customdata;
      if (typeof url === "string" && url.charAt(0) === "/") window.location.href = url;
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-figure]"), draw);
  // Printing: let the figures take the paper's width, then restore.
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll(".js-plotly-plot"), function (el) {
      Plotly.relayout(el, {width: 700});
    });
  });
  window.addEventListener("afterprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll(".js-plotly-plot"), function (el) {
      Plotly.relayout(el, {width: null, autosize: true});
    });
  });
})();
