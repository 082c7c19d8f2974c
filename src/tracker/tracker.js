/*
 * Plumb browser tracker: a drop-in replacement for Fathom's script.js.
 *
 *   <script src="https://plumb.example.com/script.js" data-site="ABCDEFGH" defer></script>
 *
 * Tag attributes (each also accepted without the `data-` prefix, as Fathom does):
 *   data-site              site id (required)
 *   data-spa               "auto" | "history" | "hash": track client-side navigations
 *   data-auto              "false": no automatic pageview when the script loads
 *   data-honor-dnt         "true": do nothing when Do Not Track or Global Privacy Control is on
 *   data-canonical         "false": ignore <link rel="canonical"> (by default its URL is the page URL)
 *   data-included-domains  comma-separated hostnames; track only on these (alias: data-allowed-domains)
 *   data-excluded-domains  comma-separated hostnames; never track on these
 *   data-outbound-links    "true": clicks on links to other hosts send the event "Outbound Link: Click"
 *   data-file-downloads    "true": clicks on links to files (pdf, zip, ...) send the event "File Download"
 *   data-track-404         "true" (on the tag of a site's "not found" page): also send the event "404"
 *   data-engagement        "true": send each pageview's engaged time and deepest scroll when the page is hidden or left
 * The last four are extensions (src/tracker/extensions.js): a tag with any of them makes this script load
 * /script.ext.js from its own origin, which sends those events through window.fathom (engagement through
 * fathom._b, this script's beacon, for the page of fathom._l, the last pageview's parameters).
 *
 * A tag with Umami's data-website-id (and no data-site) is Umami's: the Umami-compatible script /js/umami.js is
 * loaded in its place with the tag's data- attributes.
 *
 * Hits go to the script's own origin: pageviews as GET /?h=&p=&r=&qs=&sid=&cid= (an Image request),
 * events and goals as POST /?name=&payload=... or /?gcode=&gval=..., engagement as POST /?e=&sd=&h=&p=&sid=
 * (sendBeacon, else fetch keepalive).
 * window.fathom offers trackPageview, trackEvent, trackGoal, setSite, blockTrackingForMe and
 * enableTrackingForMe, and replays calls queued in window.fathom.q before the script loaded.
 *
 * Plain ES2017, no build step: the server minifies it with esbuild at startup. It must stay under 2 KB (2,048
 * bytes) gzipped as served, Fathom's promise (test/browser/tracker.test.ts): optional behaviours go in extensions.
 */
(function () {
  var w = window;
  var d = document;
  var nav = navigator;
  var loc = location;
  var previous = w.fathom;
  // Another copy of this script (or Fathom's) is already installed: leave it alone.
  if (previous && previous.trackPageview) return;

  var script =
    d.currentScript || d.querySelector('script[data-site]') || d.querySelector('script[site]');
  if (!script || !script.src) return;

  function attr(name) {
    return script.getAttribute('data-' + name) || script.getAttribute(name);
  }
  function on(name) {
    return attr(name) === 'true';
  }
  function list(name) {
    var v = attr(name);
    return v ? v.split(',').map(function (s) { return s.trim().toLowerCase(); }).filter(Boolean) : [];
  }

  var endpoint = new URL(script.src, loc.href).origin + '/';
  var siteId = attr('site');

  // Another script of this server, after this one; it carries the tag's nonce, so a page whose Content Security
  // Policy admits this script by nonce admits that one too.
  function load(src) {
    var s = d.createElement('script');
    s.nonce = script.nonce;
    s.src = src;
    return d.head.appendChild(s);
  }

  if (!siteId && attr('website-id')) {
    var dir = script.src.replace(/\/[^/]*$/, '');
    var umami = load(dir + '/js/umami.js');
    // Set before umami.js runs (a script added to the page runs later, once fetched).
    for (var i = 0, a; (a = script.attributes[i++]); ) a.name != 'src' && umami.setAttribute(a.name, a.value);
    // Umami sends to the script's folder unless told otherwise: this one's, not /js/'s.
    umami.getAttribute('data-host-url') || umami.setAttribute('data-host-url', dir);
    return;
  }
  var spa = attr('spa');
  var honorDnt = on('honor-dnt');
  var canonical = attr('canonical') !== 'false';
  var included = list('included-domains');
  if (!included.length) included = list('allowed-domains');
  var excluded = list('excluded-domains');
  var history = w.history;
  var historyMode = spa === 'history' || (spa === 'auto' && !!(history && history.pushState));
  var hashMode = spa === 'hash' || (spa === 'auto' && !historyMode);
  var QS_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'ref', 'source', 'via', 'keyword', 'kw'];
  var lastPageview;
  var sentPageview = false;

  function storage() {
    try {
      return w.localStorage;
    } catch (e) {
      return null;
    }
  }

  function enabled() {
    var host = loc.hostname.toLowerCase();
    var store = storage();
    if (store && store.getItem('blockFathomTracking') === 'true') return false;
    if (honorDnt && (nav.doNotTrack === '1' || w.doNotTrack === '1' || nav.globalPrivacyControl === true)) return false;
    if (excluded.indexOf(host) >= 0) return false;
    if (included.length && included.indexOf(host) < 0) return false;
    // Only obvious crawlers that run scripts; the collector drops bots anyway. HeadlessChrome is allowed.
    return !/bot\b|crawl|spider|slurp/i.test(nav.userAgent);
  }

  // While the page is being prerendered nothing is sent; queued hits go out once it becomes visible.
  var pending = [];
  function prerendering() {
    return d.visibilityState === 'prerender' || d.prerendering === true;
  }
  function flush() {
    if (prerendering()) return;
    var run = pending;
    pending = [];
    run.forEach(function (fn) { fn(); });
  }
  d.addEventListener('visibilitychange', flush);
  d.addEventListener('prerenderingchange', flush);

  function query(params) {
    params.cid = Math.floor(Math.random() * 1e8) + 1;
    return endpoint + '?' + Object.keys(params).map(function (k) {
      return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]);
    }).join('&');
  }

  function deliver(fn) {
    if (prerendering()) pending.push(fn);
    else fn();
  }

  // The page being tracked: an explicit url, else the canonical link (unless disabled), else location.
  function page(url) {
    var link = url === undefined && canonical && d.querySelector('link[rel="canonical"][href]');
    var u = new URL(url !== undefined ? url : link ? link.href : loc.href, loc.href);
    var qs = {};
    // Campaign parameters come from the address bar, overlaid by those of an explicit url.
    [loc.search, url !== undefined ? u.search : ''].forEach(function (search) {
      new URLSearchParams(search).forEach(function (v, k) {
        if (QS_KEYS.indexOf(k) >= 0) qs[k] = v;
      });
    });
    var h = u.origin;
    var ref = d.referrer;
    var refHost;
    try {
      refHost = new URL(ref).hostname;
    } catch (e) {
      ref = '';
    }
    return {
      h: h,
      p: (u.pathname || '/') + (hashMode ? u.hash : ''),
      // A referrer from the page's own host is an internal navigation, not a source.
      r: refHost === u.hostname || refHost === loc.hostname ? '' : ref,
      qs: JSON.stringify(qs),
      sid: siteId,
    };
  }

  function beacon(params) {
    if (!params.sid || !enabled()) return;
    deliver(function () {
      var url = query(params);
      var sent = false;
      try {
        sent = nav.sendBeacon(url);
      } catch (e) {}
      if (!sent && w.fetch) fetch(url, { method: 'POST', keepalive: true, mode: 'no-cors' }).catch(function () {});
    });
  }

  function event(fields, siteOverride) {
    var pg = page();
    for (var k in pg) fields[k] = pg[k];
    if (siteOverride) fields.sid = siteOverride;
    beacon(fields);
  }

  var api = function (method) {
    var fn = api[method];
    if (typeof fn === 'function') fn.apply(api, [].slice.call(arguments, 1));
  };

  api.trackPageview = function (opts) {
    opts = opts || {};
    var params = page(opts.url);
    // Later pageviews in the same document are client-side navigations: no external referrer.
    params.r = opts.referrer || (sentPageview ? '' : params.r);
    var key = params.sid + ' ' + params.h + params.p + ' ' + params.qs;
    if (!params.sid || key === lastPageview || !enabled()) return;
    lastPageview = key;
    sentPageview = true;
    api._l = params;
    deliver(function () {
      new Image().src = query(params);
    });
  };

  // Every option but _site_id goes in the payload: _value is the value, other keys are custom properties.
  api.trackEvent = function (name, opts) {
    var payload = {};
    var n = 0;
    for (var k in opts) if (k != '_site_id') (payload[k] = opts[k]), n++;
    event(n ? { name: name, payload: JSON.stringify(payload) } : { name: name }, opts && opts._site_id);
  };

  // For the engagement extension: the tracker's own transport, with its opt-outs and prerendering rules.
  api._b = beacon;

  api.trackGoal = function (code, cents) {
    event({ gcode: code, gval: cents });
  };

  api.setSite = function (id) {
    siteId = id;
  };

  // The older tracker.js snippet API: fathom('set', 'siteId', 'ABCDEFGH').
  api.set = function (key, value) {
    if (key === 'siteId') siteId = value;
  };

  api.blockTrackingForMe = function () {
    var store = storage();
    if (store) store.setItem('blockFathomTracking', 'true');
    try {
      alert(store ? 'You have blocked tracking for yourself on this website' : "Your browser doesn't support localStorage.");
    } catch (e) {}
  };

  api.enableTrackingForMe = function () {
    var store = storage();
    if (store) store.removeItem('blockFathomTracking');
    try {
      alert('Tracking has been enabled for your device');
    } catch (e) {}
  };

  w.fathom = api;

  function navigated() {
    api.trackPageview();
  }

  if (historyMode) {
    ['pushState', 'replaceState'].forEach(function (name) {
      var original = history[name];
      history[name] = function () {
        var before = loc.href;
        var result = original.apply(this, arguments);
        if (loc.href !== before) navigated();
        return result;
      };
    });
    w.addEventListener('popstate', navigated);
  } else if (hashMode) {
    w.addEventListener('hashchange', navigated);
  }

  // Calls queued by a snippet-style stub before the script loaded (fathom-client keeps its own queue and
  // flushes it from the script's onload, which runs after this).
  ((previous && previous.q) || []).forEach(function (args) {
    api.apply(null, [].slice.call(args));
  });

  if (attr('auto') !== 'false') setTimeout(navigated);

  // Outbound links, file downloads, 404s and engagement: only the tags asking for them load (and pay for) the
  // extensions, told which ones by the data-on attribute.
  var wanted = ['outbound-links', 'file-downloads', 'track-404', 'engagement'].filter(on);
  if (wanted.length) load(endpoint + 'script.ext.js').setAttribute('data-on', wanted.join(' '));
})();
