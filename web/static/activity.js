// Follows the activity: when something happens in the person's spaces, the newest page
// reads itself again and shows it (server-sent events from /activity/events).
(function () {
  "use strict";
  var head = document.getElementById("activity");
  if (!head || !window.EventSource) return;
  var note = document.getElementById("live");
  function say(text) { note.textContent = text; note.hidden = false; }
  var events = new EventSource("/activity/events?mark=" + encodeURIComponent(head.dataset.mark));
  events.addEventListener("activity", function () {
    fetch("/activity", { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var main = fresh.querySelector("main"), top = fresh.querySelector("header.top");
        if (main) document.querySelector("main").replaceWith(main);
        if (top) document.querySelector("header.top").replaceWith(top);
        head = document.getElementById("activity");
        say("Something happened: shown below.");
      })
      .catch(function () { say("Something happened: reload to see it."); });
  });
})();
