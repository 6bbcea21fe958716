// Comments beside their lines, in the document view. Each block of the text says which
// lines it shows (data-line, data-end); each open comment (an <aside> after the text) moves
// beside the block its first line is in, and that block is marked in the margin. Each block
// gets a button to comment on its lines. Replies, resolves and new comments are sent with
// the form's own fields (FormData, same origin) and the comments are read anew, without
// reloading the page. Without this script the comments stay listed after the text, and
// the forms post as forms do.
(function () {
  "use strict";
  var body = document.getElementById("body");
  var section = document.getElementById("line-comments");
  if (!body || !section) return;
  var note = document.getElementById("live");
  function say(text) { if (note) { note.textContent = text; note.hidden = false; } }

  function blocks() { return Array.prototype.slice.call(body.querySelectorAll(":scope > [data-line]")); }

  // blockOf is the block that shows line n: the last one starting at or before it.
  function blockOf(list, n) {
    var found = null;
    for (var i = 0; i < list.length; i++) {
      if (Number(list[i].dataset.line) <= n) found = list[i]; else break;
    }
    return found || list[0] || null;
  }

  function place() {
    var list = blocks();
    list.forEach(function (b) { b.classList.remove("commented"); });
    section.querySelectorAll("aside.thread[data-from]").forEach(function (t) {
      var b = blockOf(list, Number(t.dataset.from));
      if (!b) return;
      b.classList.add("commented");
      var after = b;
      while (after.nextElementSibling && after.nextElementSibling.matches("aside.thread, form.new-line-comment")) after = after.nextElementSibling;
      after.after(t);
    });
    var head = section.querySelector("h2");
    if (head) head.hidden = !section.querySelector("aside.thread");
  }

  function addButtons() {
    blocks().forEach(function (b) {
      if (b.querySelector(":scope > button.add-line-comment")) return;
      var a = b.dataset.line, z = b.dataset.end || a;
      var what = a === z ? "line " + a : "lines " + a + "-" + z;
      var btn = document.createElement("button");
      btn.type = "button";
      btn.className = "add-line-comment";
      btn.textContent = "+";
      btn.title = "Comment on " + what;
      btn.setAttribute("aria-label", "Comment on " + what);
      btn.addEventListener("click", function () { open(b, a, z, what); });
      b.prepend(btn);
    });
  }

  function open(b, a, z, what) {
    var old = body.querySelector("form.new-line-comment");
    if (old) old.remove();
    var form = document.getElementById("new-comment-form").content.firstElementChild.cloneNode(true);
    form.elements.from.value = a;
    form.elements.to.value = z;
    form.querySelector(".what-lines").textContent = "Your comment on " + what;
    form.querySelector(".cancel").addEventListener("click", function () { form.remove(); });
    b.after(form);
    form.elements.text.focus();
  }

  // After a change, the page's comments are read anew and put back beside their lines.
  function refresh() {
    return fetch(location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("line-comments");
        if (!fresh) return;
        body.querySelectorAll("aside.thread, form.new-line-comment").forEach(function (t) { t.remove(); });
        section.replaceChildren.apply(section, Array.prototype.slice.call(fresh.childNodes));
        place();
        var b = document.getElementById("comments");
        var fb = new DOMParser().parseFromString(html, "text/html").getElementById("comments");
        if (b && fb) b.textContent = fb.textContent;
      });
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches || !form.matches("form.in-place")) return;
    e.preventDefault();
    var button = form.querySelector("button:not(.cancel)");
    if (button) button.disabled = true;
    fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" })
      .then(function (r) {
        return r.text().then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var bad = doc.querySelector(".notice.bad, .problem, main p");
          if (!r.ok) throw new Error(bad ? bad.textContent : "the server answered " + r.status);
          var good = doc.querySelector(".notice");
          return good ? good.textContent : "Saved.";
        });
      })
      .then(function (what) { return refresh().then(function () { say(what); }); })
      .catch(function (err) { say(err.message); if (button) button.disabled = false; });
  });

  addButtons();
  place();
})();
