// Live updates: poll the page being shown with its ETag and, when the
// records changed, swap the #live part in place. No reload, no library.
(function () {
  "use strict";
  var interval = 2000;
  var status = document.getElementById("live-status");
  // ago keeps "last heard" times true between updates of the records.
  function ago() {
    var now = Date.now();
    document.querySelectorAll("time[data-ago]").forEach(function (el) {
      var s = Math.max(0, Math.round((now - Date.parse(el.getAttribute("datetime"))) / 1000));
      var text = s < 60 ? s + "s" : s < 3600 ? Math.floor(s / 60) + "m" : s < 172800 ? Math.floor(s / 3600) + "h" : Math.floor(s / 86400) + "d";
      el.textContent = text + " ago";
    });
  }
  function tick() {
    if (document.hidden) { // a tab nobody looks at asks nothing
      setTimeout(tick, interval);
      return;
    }
    var etag = document.body.getAttribute("data-etag") || "";
    fetch(location.href, { headers: { "If-None-Match": etag }, cache: "no-store", credentials: "same-origin" })
      .then(function (res) {
        if (res.status === 304) {
          return null;
        }
        if (!res.ok) {
          throw new Error("HTTP " + res.status);
        }
        return res.text().then(function (text) {
          var doc = new DOMParser().parseFromString(text, "text/html");
          var fresh = doc.getElementById("live");
          var old = document.getElementById("live");
          if (!fresh || !old) {
            return;
          }
          var active = document.activeElement;
          if (active && active.form && old.contains(active)) {
            return; // someone is typing a filter: swap on a later tick
          }
          var focused = active && active.id;
          old.replaceWith(document.importNode(fresh, true));
          document.body.setAttribute("data-etag", res.headers.get("ETag") || "");
          if (focused && document.getElementById(focused)) {
            document.getElementById(focused).focus();
          }
          status.textContent = "Updated " + new Date().toISOString().replace(/\.\d+Z$/, "Z"); // UTC, as every time the server writes
        });
      })
      .catch(function (err) {
        status.textContent = "Live updates paused: " + err.message;
      })
      .finally(function () {
        ago();
        setTimeout(tick, interval);
      });
  }
  ago();
  setTimeout(tick, interval);
})();
