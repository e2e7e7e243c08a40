/* ECP console: live updates (ADR 0084). An enhancement only: every page works without it.
 *
 * On the inbox, the run list and a run's page, subscribe to /console/events (ids only) and,
 * when an event concerns what the page shows, fetch the page again and swap its <main>. While
 * the person is typing in a field of the page, offer a button instead of swapping under them.
 */
(function () {
  "use strict";
  var path = window.location.pathname;
  var runPage = path.match(/^\/console\/runs\/([^\/]+)$/);
  var wants;
  if (path === "/console/inbox") {
    wants = function (kind) { return kind === "approval" || kind === "run"; };
  } else if (path === "/console/runs") {
    wants = function (kind) { return kind === "run"; };
  } else if (runPage) {
    var shown = decodeURIComponent(runPage[1]);
    wants = function (kind, id) { return kind === "run" && id === shown; };
  } else {
    return;
  }
  if (!window.EventSource || !window.fetch || !window.DOMParser) { return; }

  var note = document.createElement("div");
  note.className = "live-note";
  note.setAttribute("role", "status");
  note.setAttribute("aria-live", "polite");
  document.body.appendChild(note);

  var timer = null;
  var busy = false;

  function typing() {
    var main = document.getElementById("main");
    var active = document.activeElement;
    return main && active && main.contains(active) &&
      /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
  }

  function offer() {
    note.textContent = "";
    var text = document.createElement("span");
    text.textContent = "This page has news. ";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "small";
    button.textContent = "Show it";
    button.addEventListener("click", function () { swap(true); });
    note.appendChild(text);
    note.appendChild(button);
    note.classList.add("shown");
  }

  function swap(asked) {
    if (busy) { return; }
    if (!asked && typing()) { offer(); return; }
    busy = true;
    window.fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (answer) {
        if (answer.redirected || !answer.ok) { window.location.reload(); return null; }
        return answer.text();
      })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new window.DOMParser().parseFromString(html, "text/html").getElementById("main");
        var main = document.getElementById("main");
        if (fresh && main) {
          main.innerHTML = fresh.innerHTML;
          note.textContent = "Updated at " + new Date().toLocaleTimeString();
          note.classList.add("shown");
        }
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () { busy = false; });
  }

  function soon() {
    if (timer !== null) { window.clearTimeout(timer); }
    timer = window.setTimeout(function () { timer = null; swap(false); }, 300);
  }

  var source = new window.EventSource("/console/events");
  ["approval", "run"].forEach(function (kind) {
    source.addEventListener(kind, function (event) {
      if (wants(kind, event.data)) { soon(); }
    });
  });
  source.addEventListener("reload", soon);
  source.addEventListener("end", function () { source.close(); });
  document.documentElement.setAttribute("data-live", "on");
})();
