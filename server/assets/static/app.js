// loom dashboard: local times, confirmations, and the live view of a
// session. Plain JavaScript; nothing to build.
(function () {
  'use strict';

  function localTimes(root) {
    root.querySelectorAll('time[datetime]').forEach(function (t) {
      var d = new Date(t.getAttribute('datetime'));
      if (!isNaN(d.getTime())) {
        t.title = t.textContent;
        t.textContent = d.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
      }
    });
  }
  localTimes(document);

  document.querySelectorAll('form[data-confirm]').forEach(function (f) {
    f.addEventListener('submit', function (e) {
      if (!window.confirm(f.getAttribute('data-confirm'))) { e.preventDefault(); }
    });
  });

  // The insights calendar, where it is wider than its box (a year on a
  // phone): it opens on the latest day with prompts, not on weeks that
  // may be empty, and its weekday names stay at its left edge as it
  // scrolls.
  var calBox = document.querySelector('#calendar .cal-scroll');
  var calSvg = calBox && calBox.querySelector('svg');
  var calNames = calSvg && calSvg.querySelector('.cal-days');
  if (calNames) {
    var activeDays = calSvg.querySelectorAll('rect.cal:not(.l0)');
    var latest = activeDays[activeDays.length - 1];
    if (latest && calBox.scrollWidth > calBox.clientWidth) {
      var box = calBox.getBoundingClientRect(), cell = latest.getBoundingClientRect();
      calBox.scrollLeft += (cell.left + cell.width / 2) - (box.left + box.width / 2);
    }
    var pinNames = function () {
      var s = calSvg.getBoundingClientRect(), b = calBox.getBoundingClientRect();
      var x = s.width > 0 ? (b.left - s.left) * calSvg.viewBox.baseVal.width / s.width : 0;
      calNames.setAttribute('transform', 'translate(' + Math.max(0, x) + ' 0)');
    };
    calBox.addEventListener('scroll', pinNames, { passive: true });
    window.addEventListener('resize', pinNames);
    pinNames();
  }

  // Live list: the user's event stream says when their newest activity
  // changed; the page, as filtered and sorted, is read again and its
  // list put in place.
  var sessionList = document.getElementById('session-list');
  if (sessionList && sessionList.hasAttribute('data-live') && window.EventSource) {
    var listGen = 0;
    var les = new EventSource('/api/v1/events');
    les.addEventListener('open', function () { sessionList.dataset.connected = ''; });
    les.addEventListener('error', function () { delete sessionList.dataset.connected; });
    les.addEventListener('sessions', function () {
      var gen = ++listGen;
      fetch(location.href, { credentials: 'same-origin' })
        .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('session-list');
          if (gen !== listGen || !fresh) { return; }
          localTimes(fresh);
          sessionList.innerHTML = fresh.innerHTML;
          sessionList.dataset.updated = String(gen);
        })
        .catch(function () {});
    });
  }

  // Live view: the session's event stream announces each new (or
  // changed) message by its seq; the server renders it, and it is put in
  // place without a reload.
  var list = document.getElementById('messages');
  if (!list || !list.hasAttribute('data-live') || !window.EventSource) { return; }
  var id = list.getAttribute('data-session');
  var status = document.getElementById('live');
  var base = '/s/' + encodeURIComponent(id);
  var queue = Promise.resolve();
  var pending = 0; // messages announced and not yet in place
  var usageGen = 0;

  function setStatus(text, ok) {
    if (!status) { return; }
    status.textContent = text;
    status.classList.toggle('off', !ok);
  }

  function place(seq, html) {
    var tpl = document.createElement('template');
    tpl.innerHTML = html.trim();
    var el = tpl.content.firstElementChild;
    if (!el) { return; }
    localTimes(el);
    var old = document.getElementById('m-' + seq);
    if (old) { old.replaceWith(el); return; }
    var nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 200;
    el.classList.add('fresh');
    list.appendChild(el);
    var empty = document.querySelector('.conversation .empty');
    if (empty) { empty.remove(); }
    if (nearBottom) { el.scrollIntoView({ block: 'end' }); }
  }

  // The usage panel: the store adds each message's usage to the session's
  // totals as it stores the message, so once the announced messages are in
  // place the server's panel holds their figures. Only the newest answer
  // is put in place, should two cross.
  function refreshUsage() {
    var gen = ++usageGen;
    fetch(base + '/usage', { credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
      .then(function (html) {
        var old = document.getElementById('usage');
        if (gen !== usageGen || !old) { return; }
        var tpl = document.createElement('template');
        tpl.innerHTML = html.trim();
        var el = tpl.content.firstElementChild;
        if (!el) { return; }
        localTimes(el);
        old.replaceWith(el);
      })
      .catch(function () { setStatus('could not refresh the usage', false); });
  }

  var es = new EventSource('/api/v1/sessions/' + encodeURIComponent(id) + '/events?after=' + list.getAttribute('data-after'));
  // data-connected says the stream is open: from then on no message
  // is missed.
  es.addEventListener('open', function () { list.dataset.connected = ''; setStatus('live', true); });
  es.addEventListener('error', function () { delete list.dataset.connected; setStatus('reconnecting…', false); });
  es.addEventListener('message', function (e) {
    var seq = e.lastEventId;
    pending++;
    // One at a time, so messages land in order; the usage once a burst
    // of them is in.
    queue = queue.then(function () {
      return fetch(base + '/m/' + encodeURIComponent(seq), { credentials: 'same-origin' })
        .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
        .then(function (html) { place(seq, html); })
        .catch(function () { setStatus('could not load message ' + seq, false); })
        .then(function () { if (--pending === 0) { refreshUsage(); } });
    });
  });
})();
