// Follows the inbox: when something new waits (or something was decided elsewhere), the
// page reads itself again and shows it (server-sent events from /inbox/events). A form being
// filled in (a reason to decline) is not swept away: a note says what came instead.
(function () {
  "use strict";
  var head = document.getElementById("inbox");
  if (!head || !window.EventSource) return;
  var note = document.getElementById("live");
  function say(text) { note.textContent = text; note.hidden = false; }
  function busy() {
    var a = document.activeElement;
    return a && a.tagName === "TEXTAREA" && a.value !== "";
  }
  var events = new EventSource("/inbox/events?mark=" + encodeURIComponent(head.dataset.mark));
  events.addEventListener("waiting", function (e) {
    var n = JSON.parse(e.data).waiting;
    var what = n === 1 ? "1 thing waits for you" : n + " things wait for you";
    if (busy()) { say(what + ": reload to see the inbox as it is now."); return; }
    fetch("/inbox", { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var main = fresh.querySelector("main"), top = fresh.querySelector("header.top");
        if (main) document.querySelector("main").replaceWith(main);
        if (top) document.querySelector("header.top").replaceWith(top);
        head = document.getElementById("inbox");
        say(what + ": shown below.");
      })
      .catch(function () { say(what + ": reload to see it."); });
  });
})();
