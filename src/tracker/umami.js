/*
 * Plumb's Umami-compatible tracker. A site's existing Umami tag works once its src points at Plumb's /script.js
 * (which hands an Umami tag over to this script, /js/umami.js) and the site is given its Umami website id:
 *
 *   <script defer src="https://plumb.example.com/script.js" data-website-id="94db1cb1-74f4-4a40-ad6c-962362670409"></script>
 *
 * Reads data-website-id (an Umami website UUID, or a Plumb site id), data-host-url (where to send; default: the
 * folder of the script), data-auto-track, data-domains, data-tag, data-exclude-search, data-exclude-hash,
 * data-do-not-track and data-before-send; offers umami.track() (no argument: a pageview; a name and data: an
 * event; an object or a function of the payload: that payload) and umami.identify(); data-umami-event attributes
 * on elements send events on click. Hits go to POST /api/send as {type, payload: {website, hostname, screen,
 * language, title, url, referrer, tag, name, data}}.
 */
(function () {
  var w = window;
  var d = document;
  var loc = location;
  var script = d.currentScript;
  if (!script) return;
  var attr = function (name) {
    return script.getAttribute('data-' + name);
  };
  var website = attr('website-id');
  var host = attr('host-url') || script.src.split('/').slice(0, -1).join('/');
  var endpoint = host.replace(/\/$/, '') + '/api/send';
  var tag = attr('tag') || undefined;
  var autoTrack = attr('auto-track') !== 'false';
  var honorDnt = attr('do-not-track') === 'true';
  var excludeSearch = attr('exclude-search') === 'true';
  var excludeHash = attr('exclude-hash') === 'true';
  var domains = (attr('domains') || '').split(',').map(function (s) { return s.trim(); }).filter(Boolean);
  var beforeSend = attr('before-send');
  var screenSize = w.screen.width + 'x' + w.screen.height;
  var disabled = false;
  var identity;

  function normalize(raw) {
    if (!raw) return raw;
    try {
      var u = new URL(raw, loc.href);
      if (excludeSearch) u.search = '';
      if (excludeHash) u.hash = '';
      return u.toString();
    } catch (e) {
      return raw;
    }
  }

  var currentUrl = normalize(loc.href);
  var currentRef = normalize(d.referrer.indexOf(loc.origin) === 0 ? '' : d.referrer);

  function payload() {
    return {
      website: website,
      screen: screenSize,
      language: navigator.language,
      title: d.title,
      hostname: loc.hostname,
      url: currentUrl,
      referrer: currentRef,
      tag: tag,
      id: identity,
    };
  }

  function trackingDisabled() {
    var stored = false;
    try {
      stored = !!w.localStorage.getItem('umami.disabled');
    } catch (e) {}
    var dnt = w.doNotTrack || navigator.doNotTrack || navigator.msDoNotTrack;
    return (
      disabled ||
      !website ||
      stored ||
      (domains.length > 0 && domains.indexOf(loc.hostname) < 0) ||
      (honorDnt && (dnt === 1 || dnt === '1' || dnt === 'yes'))
    );
  }

  function send(body, type) {
    if (trackingDisabled()) return Promise.resolve();
    var callback = beforeSend && w[beforeSend];
    return Promise.resolve(typeof callback === 'function' ? callback(type, body) : body).then(function (final) {
      if (!final) return;
      return fetch(endpoint, {
        method: 'POST',
        keepalive: true,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: type, payload: final }),
        credentials: 'omit',
      })
        .then(function (response) {
          return response.json();
        })
        .then(function (data) {
          if (data && data.disabled) disabled = true;
        })
        .catch(function () {});
    });
  }

  function track(name, data) {
    if (typeof name === 'string') {
      var body = payload();
      body.name = name;
      body.data = data;
      return send(body, 'event');
    }
    if (typeof name === 'object' && name) return send(Object.assign({}, name), 'event');
    if (typeof name === 'function') return send(name(payload()), 'event');
    return send(payload(), 'event');
  }

  function identify(id, data) {
    if (typeof id === 'string') identity = id;
    var body = payload();
    body.data = typeof id === 'object' ? id : data;
    return send(body, 'identify');
  }

  // Client-side navigations: a pageview a moment after the URL changes (the page title may change too).
  function navigated(url) {
    if (!url) return;
    currentRef = currentUrl;
    currentUrl = normalize(new URL(url, loc.href).toString());
    if (currentUrl !== currentRef) setTimeout(track, 300);
  }

  function hookHistory() {
    ['pushState', 'replaceState'].forEach(function (method) {
      var original = w.history[method];
      w.history[method] = function (state, title, url) {
        navigated(url);
        return original.apply(this, arguments);
      };
    });
  }

  // data-umami-event="Signup" data-umami-event-plan="pro" on any element: an event on click.
  function clicked(event) {
    var el = event.target.closest && event.target.closest('[data-umami-event]');
    if (!el) return;
    var data = {};
    [].forEach.call(el.attributes, function (a) {
      var m = /^data-umami-event-([\w-]+)$/.exec(a.name);
      if (m) data[m[1]] = a.value;
    });
    track(el.getAttribute('data-umami-event'), data);
  }

  if (!w.umami) w.umami = { track: track, identify: identify };

  var started = false;
  function start() {
    if (started || d.readyState !== 'complete') return;
    started = true;
    track();
    hookHistory();
    d.addEventListener('click', clicked, true);
  }
  if (autoTrack && !trackingDisabled()) {
    if (d.readyState === 'complete') start();
    else d.addEventListener('readystatechange', start, true);
  }
})();
