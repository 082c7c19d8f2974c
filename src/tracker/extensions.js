/*
 * Plumb tracker extensions (/script.ext.js): outbound links, file downloads and 404 pages, kept out of
 * /script.js so that the default tag stays under 2 KB gzipped. Nobody writes this tag: /script.js (tracker.js)
 * adds it when its own tag has one of the attributes, and names the ones asked for in data-on:
 *
 *   data-outbound-links="true"  clicks on links to other hosts send the event "Outbound Link: Click"
 *   data-file-downloads="true"  clicks on links to files (pdf, zip, ...) send the event "File Download"
 *   data-track-404="true"       the event "404" (on the tag of a site's "not found" page)
 *
 * The link's URL goes as the custom property `url`, the 404 page's path as `path`. Everything is sent through
 * window.fathom.trackEvent, so the site id, opt-outs, Do Not Track, prerendering and the beacon transport are
 * the tracker's own.
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
})();
