// Follows a page of what happens, the inbox or the activity (its heading's data-follows
// names it): when its events say something changed (server-sent events from
// <page>/events), the newest page reads itself again and shows it. A form being filled in
// (a reason to decline) is not swept away: a note says what came instead.
(function () {
  "use strict";
  var head = document.querySelector("h1[data-follows]");
  if (!head || !window.EventSource) return;
  var path = head.dataset.follows, name = path.slice(1);
  var note = document.getElementById("live");
  function say(text) { note.textContent = text; note.hidden = false; }
  function busy() {
    var a = document.activeElement;
    return a && a.tagName === "TEXTAREA" && a.value !== "";
  }
  // What came, as the note says it: how many wait (the inbox's events), else that
  // something happened (the activity's).
  function came(e) {
    var n = JSON.parse(e.data).waiting;
    if (typeof n !== "number") return "Something happened";
    return n === 1 ? "1 thing waits for you" : n + " things wait for you";
  }
  function follow(e) {
    var what = came(e);
    if (busy()) { say(what + ": reload to see the " + name + " as it is now."); return; }
    fetch(path, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var main = fresh.querySelector("main"), top = fresh.querySelector("header.top");
        if (main) document.querySelector("main").replaceWith(main);
        if (top) document.querySelector("header.top").replaceWith(top);
        say(what + ": shown below.");
      })
      .catch(function () { say(what + ": reload to see it."); });
  }
  var events = new EventSource(path + "/events?mark=" + encodeURIComponent(head.dataset.mark));
  events.addEventListener("waiting", follow);
  events.addEventListener("activity", follow);
})();
