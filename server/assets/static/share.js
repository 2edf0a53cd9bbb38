// The page of a share link: fetches the sealed session, decrypts it in
// this browser with the key of the link's fragment (#k=…, never sent to
// the server) and draws it read-only as the dashboard does. Everything
// is drawn as text (textContent), never as HTML, so nothing in a shared
// session runs here. The format is share/seal.go's: byte 0 the version
// (1), 12 bytes of nonce, then AES-256-GCM of the gzipped JSON with the
// additional data "loom share 1".
(function () {
  "use strict";
  var main = document.getElementById("share");
  var status = document.getElementById("share-status");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null && text !== "") e.textContent = String(text);
    return e;
  }

  function fail(title, msg) {
    status.textContent = "";
    status.appendChild(el("h1", "", title));
    status.appendChild(el("p", "", msg));
    status.id = "share-status";
    status.dataset.state = "failed";
  }

  function keyOf(hash) {
    var m = /(?:^#|&)k=([A-Za-z0-9_-]{43})(?:&|$)/.exec(hash);
    if (!m) return null;
    var b = atob(m[1].replace(/-/g, "+").replace(/_/g, "/") + "=");
    var out = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
    return out.length === 32 ? out : null;
  }

  function when(t) {
    var d = new Date(t);
    if (isNaN(d)) return "";
    return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  }

  function io(label, text, cls) {
    var d = el("div", "io" + (cls ? " " + cls : ""));
    d.appendChild(el("h4", "", label));
    var pre = el("pre");
    pre.appendChild(el("code", "", text));
    d.appendChild(pre);
    return d;
  }

  function statusCls(s) {
    return { completed: "ok", error: "err", running: "run", pending: "run" }[s] || "";
  }

  // What the dashboard shows of a tool call's result without a click
  // (htmlview.ToolPeek): its first PEEK_LINES lines, each cut to
  // PEEK_RUNES, and how many lines more; the error when there is no
  // output.
  var PEEK_LINES = 4, PEEK_RUNES = 200;
  function peek(p) {
    var text = p.output || "", err = false;
    if (!text.trim() && p.error) { text = p.error; err = true; }
    text = text.replace(/^\n+|\n+$/g, "");
    if (!text.trim()) return null;
    var lines = text.split("\n");
    var shown = lines.slice(0, PEEK_LINES).map(function (l) {
      var r = Array.from(l.replace(/[ \t\r]+$/, ""));
      return r.length > PEEK_RUNES ? r.slice(0, PEEK_RUNES - 1).join("") + "…" : r.join("");
    });
    var e = el("span", "tool-peek" + (err ? " err" : ""), shown.join("\n"));
    var more = lines.length - shown.length;
    if (more > 0) e.appendChild(el("span", "more", "… " + more + " more line" + (more === 1 ? "" : "s")));
    return e;
  }

  function part(p) {
    switch (p.type) {
      case "text":
        return el("div", "part text share-text", p.text);
      case "reasoning": {
        var d = el("details", "part reasoning");
        d.appendChild(el("summary", "", "Reasoning"));
        d.appendChild(el("div", "share-text", p.text));
        return d;
      }
      case "tool": {
        var t = el("details", "part tool status-" + statusCls(p.status));
        var s = el("summary");
        s.appendChild(el("span", "tool-name", p.name));
        s.appendChild(document.createTextNode(" "));
        s.appendChild(el("span", "badge status " + statusCls(p.status), p.status));
        if (p.title) {
          s.appendChild(document.createTextNode(" "));
          s.appendChild(el("span", "tool-title", p.title));
        }
        if (p.input_line) s.appendChild(el("code", "tool-input", p.input_line));
        var pk = peek(p);
        if (pk) s.appendChild(pk);
        t.appendChild(s);
        if (p.input) t.appendChild(io("Input", p.input));
        if (p.output) t.appendChild(io("Output", p.output));
        if (p.error) t.appendChild(io("Error", p.error, "err"));
        return t;
      }
      case "agent": {
        var a = el("div", "part agent", "Sub-agent ");
        a.appendChild(el("strong", "", p.name));
        return a;
      }
      case "file": {
        var f = el("div", "part file", "File ");
        if (p.filename) f.appendChild(el("strong", "", p.filename));
        if (p.mime) { f.appendChild(document.createTextNode(" ")); f.appendChild(el("span", "mime", p.mime)); }
        if (p.path) { f.appendChild(document.createTextNode(" ")); f.appendChild(el("code", "", p.path)); }
        if (/^https?:\/\//.test(p.url || "")) {
          var l = el("a", "", "open");
          l.href = p.url;
          l.rel = "noreferrer noopener";
          l.target = "_blank";
          f.appendChild(document.createTextNode(" "));
          f.appendChild(l);
        }
        if (p.omitted) { f.appendChild(document.createTextNode(" ")); f.appendChild(el("span", "muted", "(" + p.omitted + ")")); }
        return f;
      }
    }
    return null;
  }

  function message(m) {
    var role = /^[a-z]+$/.test(m.role) ? m.role : "other";
    var art = el("article", "msg role-" + role);
    art.id = "m" + m.seq;
    var h = el("header");
    var seq = el("a", "seq", "#" + m.seq);
    seq.href = "#m" + m.seq;
    h.appendChild(seq);
    h.appendChild(el("span", "badge role-" + role, m.role));
    if (m.model) h.appendChild(el("span", "model", m.model));
    h.appendChild(el("span", "when", when(m.created_at)));
    art.appendChild(h);
    if (m.error) art.appendChild(el("p", "flash err", m.error));
    (m.parts || []).forEach(function (p) {
      var e = part(p);
      if (e) art.appendChild(e);
    });
    return art;
  }

  function draw(s) {
    var head = el("div", "session-head");
    head.appendChild(el("h1", "", s.title));
    var meta = el("div", "meta");
    meta.appendChild(el("span", "badge surface", s.surface || "—"));
    if (s.model) meta.appendChild(el("span", "model", s.model));
    if (s.turns) meta.appendChild(el("span", "muted", "turns " + s.turns));
    meta.appendChild(el("span", "muted", (s.messages || []).length + " messages · updated " + when(s.updated_at)));
    head.appendChild(meta);
    var list = el("section", "messages");
    list.id = "messages";
    (s.messages || []).forEach(function (m) { list.appendChild(message(m)); });
    main.textContent = "";
    main.appendChild(head);
    main.appendChild(list);
    main.dataset.state = "open";
    document.title = s.title + " · loom";
  }

  async function open() {
    var key = keyOf(location.hash);
    if (!key) {
      fail("No key in this link", "A share link ends with #k= and its key; this one does not. Ask for the whole link.");
      return;
    }
    if (!window.crypto || !crypto.subtle || typeof DecompressionStream === "undefined") {
      fail("This browser cannot open the share", "It needs Web Crypto and DecompressionStream, and a secure page (https, or localhost).");
      return;
    }
    var resp;
    try {
      resp = await fetch(main.dataset.blob, { cache: "no-store", credentials: "omit" });
    } catch (e) {
      fail("The server did not answer", "Try again later.");
      return;
    }
    if (resp.status === 404) {
      fail("404", "This share link does not exist: it was revoked, it expired, or it never existed.");
      return;
    }
    if (!resp.ok) {
      fail("The server refused", "It answered " + resp.status + ". Try again later.");
      return;
    }
    var blob = new Uint8Array(await resp.arrayBuffer());
    if (blob.length < 29 || blob[0] !== 1) {
      fail("Not a share this page reads", "The server sent something that is not a sealed session.");
      return;
    }
    var plain;
    try {
      var k = await crypto.subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
      plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: blob.slice(1, 13), additionalData: new TextEncoder().encode("loom share 1") }, k, blob.slice(13));
    } catch (e) {
      fail("Wrong key", "The key in this link does not open this share: the link was cut short or altered.");
      return;
    }
    try {
      var text = await new Response(new Blob([plain]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
      draw(JSON.parse(text));
    } catch (e) {
      fail("The share is damaged", "It opened with its key but could not be read.");
    }
  }

  // A key pasted into the address bar of an open page: open again.
  window.addEventListener("hashchange", function () { location.reload(); });
  open();
})();
