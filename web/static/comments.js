// Choosing lines to comment on: a click on a line's number makes it the first line (and
// the last); a shift-click makes it the other end. The chosen lines are marked, and the
// comment's text is focused. Without this script the two numbers are typed.
(function () {
  "use strict";
  var table = document.getElementById("lines");
  var from = document.getElementById("from"), to = document.getElementById("to");
  var text = document.getElementById("comment-text");
  if (!table || !from || !to) return;
  function mark() {
    var a = Number(from.value), b = Number(to.value || from.value);
    table.querySelectorAll("tr[data-line]").forEach(function (tr) {
      var n = Number(tr.dataset.line);
      tr.classList.toggle("chosen", a > 0 && n >= Math.min(a, b) && n <= Math.max(a, b));
    });
  }
  table.addEventListener("click", function (e) {
    var link = e.target.closest("td.n a");
    if (!link) return;
    e.preventDefault();
    var n = Number(link.closest("tr").dataset.line);
    if (e.shiftKey && from.value) {
      var a = Number(from.value);
      from.value = Math.min(a, n);
      to.value = Math.max(a, n);
    } else {
      from.value = to.value = n;
    }
    mark();
    if (text) text.focus();
  });
  from.addEventListener("input", mark);
  to.addEventListener("input", mark);
  mark();
})();
