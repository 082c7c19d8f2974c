/*
 * Plumb tracker extensions (/script.ext.js): outbound links, file downloads, 404 pages and engagement, kept out of
 * /script.js so that the default tag stays under 2 KB gzipped. Nobody writes this tag: /script.js (tracker.js)
 * adds it when its own tag has one of the attributes, and names the ones asked for in data-on:
 *
 *   data-outbound-links="true"  clicks on links to other hosts send the event "Outbound Link: Click"
 *   data-file-downloads="true"  clicks on links to files (pdf, zip, ...) send the event "File Download"
 *   data-track-404="true"       the event "404" (on the tag of a site's "not found" page)
 *   data-engagement="true"      each pageview's engaged time and deepest scroll (docs/collection.md, "Engagement")
 *
 * The link's URL goes as the custom property `url`, the 404 page's path as `path`. Everything is sent through
 * window.fathom (trackEvent; engagement through _b, the tracker's beacon), so the site id, opt-outs, Do Not Track,
 * prerendering and the beacon transport are the tracker's own.
 *
 * Plain ES2017, minified by the server like tracker.js.
 */
(function () {
  var d = document;
  var fathom = window.fathom;
  var me = d.currentScript;
  var wanted = ((me && me.getAttribute('data-on')) || '').split(' ');
  if (!fathom || !fathom.trackEvent) return;

  function has(name) {
    return wanted.indexOf(name) >= 0;
  }

  var outbound = has('outbound-links');
  var downloads = has('file-downloads');

  // Sent by beacon (trackEvent's transport), so the navigation the click starts cannot cut the event off.
  function clicked(e) {
    var a = e.target.closest && e.target.closest('a[href]');
    var name = !a || !a.host ? ''
      : outbound && a.host !== location.host ? 'Outbound Link: Click'
      : downloads && /\.(pdf|docx?|xlsx?|pptx?|csv|txt|zip|gz|7z|rar|dmg|exe|pkg|mp[34]|mov|wav)$/i.test(a.pathname) ? 'File Download' : '';
    if (name) fathom.trackEvent(name, { url: a.href });
  }
  if (outbound || downloads) {
    // auxclick: a middle-button click opens the link too.
    ['click', 'auxclick'].forEach(function (type) {
      d.addEventListener(type, clicked);
    });
  }

  if (has('track-404')) fathom.trackEvent('404', { path: location.pathname });

  // Engagement: time counts while the page is visible and the visitor was active (scrolled, typed, pointed or
  // touched) within the last IDLE ms; the page's last pageview (fathom._l) gets the time since its previous
  // engagement beacon and its deepest scroll so far when the page is hidden or left, and before the next pageview
  // of a single-page app. Nothing is sent for a pageview with no engaged time.
  if (!has('engagement') || !fathom._b) return;
  var w = window;
  var IDLE = 3e4;
  var MAX_MS = 18e5;
  var deepest = 0;
  var engaged = 0;
  // The engaged stretch under way began at `start` (0: none), its latest activity at `last`.
  var start = 0;
  var last = 0;

  // Engaged time up to `now`: a stretch ends IDLE ms after its last activity.
  function settle(now) {
    if (!start) return;
    engaged += Math.min(now, last + IDLE) - start;
    start = now > last + IDLE ? 0 : now;
  }
  // The bottom of the viewport, in percent of the document's height.
  function measure() {
    var height = Math.max(d.documentElement.scrollHeight, d.body ? d.body.scrollHeight : 0);
    if (height > 0) deepest = Math.max(deepest, Math.min(100, Math.round(((w.scrollY + w.innerHeight) / height) * 100)));
  }
  function active() {
    var now = Date.now();
    settle(now);
    if (d.visibilityState === 'visible') {
      start = start || now;
      last = now;
    }
  }
  function send() {
    var page = fathom._l;
    settle(Date.now());
    measure();
    var ms = Math.min(Math.round(engaged), MAX_MS);
    engaged = 0;
    if (page && ms > 0) fathom._b({ h: page.h, p: page.p, sid: page.sid, e: ms, sd: deepest });
  }
  function fresh() {
    deepest = engaged = start = 0;
    measure();
    active();
  }

  // A single-page app's next pageview: the page it leaves gets its engagement first.
  var track = fathom.trackPageview;
  fathom.trackPageview = function () {
    var before = fathom._l;
    send();
    track.apply(this, arguments);
    if (fathom._l !== before) fresh();
  };
  ['scroll', 'keydown', 'pointerdown', 'pointermove', 'touchstart'].forEach(function (type) {
    w.addEventListener(type, function () {
      measure();
      active();
    }, { capture: true, passive: true });
  });
  d.addEventListener('visibilitychange', function () {
    if (d.visibilityState === 'hidden') {
      send();
      start = 0;
    } else active();
  });
  w.addEventListener('pagehide', send);
  fresh();
})();
