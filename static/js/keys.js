// Keyboard: "/" focuses the search box on every page; on lists, j/k move, Enter/o opens,
// x selects, c confirms the focused row's automatic category. Progressive enhancement only.
(function () {
  function typing(e) {
    var t = e.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
  }
  var rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
  var current = -1;
  function focusRow(i) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach(function (r, k) { r.classList.toggle("focused", k === current); });
    rows[current].scrollIntoView({block: "nearest"});
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "/" && !typing(e)) {
      var box = document.getElementById("global-search");
      if (box) { e.preventDefault(); box.focus(); box.select(); }
      return;
    }
    if (typing(e) || !rows.length) return;
    if (e.key === "j") { focusRow(current + 1); }
    else if (e.key === "k") { focusRow(current - 1); }
    else if ((e.key === "Enter" || e.key === "o") && current >= 0) {
      var link = rows[current].querySelector("a[data-open]");
      if (link) window.location = link.href;
    } else if (e.key === "x" && current >= 0) {
      var box2 = rows[current].querySelector("input[type=checkbox]");
      if (box2) box2.checked = !box2.checked;
    } else if (e.key === "c" && current >= 0) {
      var confirmBox = rows[current].querySelector("input[type=checkbox]");
      var form = document.getElementById("bulk-form");
      if (confirmBox && form) {
        rows.forEach(function (r) { var b = r.querySelector("input[type=checkbox]"); if (b) b.checked = false; });
        confirmBox.checked = true;
        form.submit();
      }
    } else { return; }
    e.preventDefault();
  });
  var all = document.getElementById("select-all");
  if (all) all.addEventListener("change", function () {
    rows.forEach(function (r) { var b = r.querySelector("input[type=checkbox]"); if (b) b.checked = all.checked; });
  });
})();
