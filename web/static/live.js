// Follows the open document's new versions (server-sent events from /document/<id>/events).
// Reading: the page shows the new version at once. Editing with nothing changed: the text
// and its base move to the new version. Editing with unsaved text: a note says who saved
// what, and the next save merges (the form keeps the version it started from).
(function () {
  "use strict";
  var body = document.body, doc = body.dataset.doc;
  if (!doc || !window.EventSource) return;
  var shown = Number(body.dataset.version), editing = !!body.dataset.editing;
  var proposed = Number(body.dataset.proposals || 0);
  var note = document.getElementById("live");
  var area = editing ? document.querySelector("textarea[name=text]") : null;
  var original = area ? area.value : null;

  function say(text) { note.textContent = text; note.hidden = false; }

  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var main = fresh.querySelector("main");
    if (main) document.querySelector("main").replaceWith(main);
    document.title = fresh.title;
    body.dataset.version = fresh.body.dataset.version || body.dataset.version;
  }

  // One page asked for at a time: a newer version's request ends the older one's, and the
  // server stops rendering what nobody waits for.
  var asking = null;
  function load(url) {
    if (asking) asking.abort();
    var mine = asking = new AbortController();
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" }, signal: mine.signal })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .finally(function () { if (asking === mine) asking = null; });
  }
  function superseded(e) { return e && e.name === "AbortError"; }

  var events = new EventSource("/document/" + doc + "/events?version=" + shown + "&proposals=" + proposed);
  // A new proposal: the page shows its banner anew (a page being edited only says so).
  events.addEventListener("proposed", function (e) {
    var p = JSON.parse(e.data);
    if (p.proposal <= proposed) return;
    proposed = p.proposal;
    var what = p.by + " made change " + p.proposal + " (" + p.kind + ", +" + p.added + " \u2212" + p.removed + " lines)";
    if (editing) { say(what + ": it waits for your review."); return; }
    load(location.pathname + location.search).then(function (html) { swap(html); say(what + ": it waits for your review."); })
      .catch(function () { say(what + ": reload to see it."); });
  });
  events.addEventListener("saved", function (e) {
    var v = JSON.parse(e.data);
    if (v.version <= shown) return;
    shown = v.version;
    var what = v.by + " saved version " + v.version + " (" + v.kind + ", +" + v.added + " \u2212" + v.removed + " lines)";
    if (!editing) {
      load(location.pathname + location.search).then(function (html) { swap(html); say(what + ": shown below."); })
        .catch(function (e) { if (!superseded(e)) say(what + ": reload to see it."); });
      return;
    }
    if (area && area.value === original) {
      load("/document/" + doc + "/edit").then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var text = fresh.querySelector("textarea[name=text]"), base = fresh.querySelector("input[name=base]");
        if (area.value !== original || !text || !base) { say(what + " while you were editing: saving merges your changes with it."); return; }
        area.value = original = text.value;
        document.querySelector("input[name=base]").value = base.value;
        say(what + ": the editor now holds it.");
      }).catch(function (e) { if (!superseded(e)) say(what + ": saving merges your changes with it."); });
      return;
    }
    say(what + " while you were editing: saving merges your changes with it.");
  });
})();
