/*
 * Plumb's Plausible-compatible tracker, served at Plausible's script paths (/js/script.js, /js/script.hash.js,
 * /js/script.outbound-links.file-downloads.js, ... and the older /js/plausible*.js), so a site switches by changing
 * the script's host:
 *
 *   <script defer data-domain="example.com" src="https://plumb.example.com/js/script.js"></script>
 *
 * Reads data-domain (comma-separated: one event for each site) and data-api (where to send; default: this
 * script's origin + /api/event), and offers window.plausible(name, {props, revenue, u, callback}) with the calls
 * queued in window.plausible.q replayed. Events go to POST /api/event in Plausible's format (JSON sent as
 * text/plain): n, u, d, r, p, $, h.
 *
 * Each script path extension is a build flag (the server defines them with esbuild; dead branches are dropped):
 * PLUMB_HASH, PLUMB_OUTBOUND_LINKS, PLUMB_FILE_DOWNLOADS, PLUMB_TAGGED_EVENTS, PLUMB_REVENUE, PLUMB_MANUAL,
 * PLUMB_LOCAL, PLUMB_EXCLUSIONS, PLUMB_COMPAT, PLUMB_PAGEVIEW_PROPS.
 *
 * PLUMB_WEB builds the per-site script of Plausible's current snippet (/js/pa-<id>.js, loaded async and started by
 * `plausible.init({...})`): the server puts the site's script id in place of PLUMB_SCRIPT_ID, events name the site
 * as `pa-<id>`, and the behaviours are init() options read at run time (the server defines the flags above as
 * reads of `c`, the configuration): hashBasedRouting, outboundLinks, fileDownloads (true or {fileExtensions}),
 * formSubmissions, autoCapturePageviews, captureOnLocalhost, customProperties (an object, or a function of the
 * event name), transformRequest, endpoint, logging. Tagged events and revenue are always on, as in Plausible's.
 *
 * Engagement, as Plausible's current scripts send it (every variant): per pageview, when the page is hidden or
 * loses focus and before a single-page app's next pageview, an `engagement` event with the deepest scroll reached
 * (`sd`, percent of the page) and the time the page was visible and focused since the last one (`e`, ms), sent
 * when either has grown (scrolled deeper, or 3 s or more engaged); none for a pageview that was not sent.
 *
 * As Plausible's script does, nothing is sent from localhost (unless `local` / captureOnLocalhost), from automated
 * browsers (unless window.__plausible is set) or when localStorage.plausible_ignore is "true".
 */
(function () {
  var w = window;
  var d = document;
  var loc = location;
  var script = PLUMB_COMPAT ? d.getElementById('plausible') : d.currentScript;
  if (!script) return;
  var defaultEndpoint = new URL(script.src, loc.href).origin + '/api/event';
  // The configuration: init()'s options over the served defaults (PLUMB_WEB), or the tag's attributes.
  var c = PLUMB_WEB
    ? {}
    : { endpoint: script.getAttribute('data-api') || defaultEndpoint, domain: script.getAttribute('data-domain') || loc.hostname };

  function ignored(name, options, reason) {
    if (name === 'pageview') engagement.viewed(null);
    if (PLUMB_WEB && reason && c.logging !== false) console.warn('Ignoring Event: ' + reason);
    if (options && options.callback) options.callback();
  }

  function wildcard(pattern) {
    // `*` is one path segment, `**` any run of them, as in Plausible's data-include / data-exclude.
    var re = pattern.trim().replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\0').replace(/\*/g, '[^/]*').replace(/\0/g, '.*');
    return new RegExp('^' + re + '/?$');
  }

  function excluded() {
    var path = loc.pathname + (PLUMB_HASH ? loc.hash : '');
    var include = script.getAttribute('data-include');
    var exclude = script.getAttribute('data-exclude');
    var matches = function (p) {
      return wildcard(p).test(path);
    };
    return (include && !include.split(',').some(matches)) || (exclude && exclude.split(',').some(matches));
  }

  function trigger(name, options) {
    if (!PLUMB_LOCAL && (/^localhost$|^127(\.[0-9]+){0,2}\.[0-9]+$|^\[::1?\]$/.test(loc.hostname) || loc.protocol === 'file:')) return ignored(name, options, 'localhost');
    if ((w._phantom || w.__nightmare || navigator.webdriver || w.Cypress) && !w.__plausible) return ignored(name, options);
    try {
      if (w.localStorage.plausible_ignore === 'true') return ignored(name, options, 'localStorage flag');
    } catch (e) {}
    if (PLUMB_EXCLUSIONS && name === 'pageview' && excluded()) return ignored(name, options, 'exclusion rule');

    var payload = { n: name, u: loc.href, d: c.domain, r: d.referrer || null };
    // The page an event names itself (the manual script's `u`; `url` in Plausible's current one).
    if ((PLUMB_MANUAL || PLUMB_WEB) && options && (options.u || options.url)) payload.u = options.u || options.url;
    var props = (options && options.props) || {};
    if (PLUMB_PAGEVIEW_PROPS) {
      [].forEach.call(script.attributes, function (a) {
        if (a.name.indexOf('event-') === 0 && !(a.name.slice(6) in props)) props[a.name.slice(6)] = a.value;
      });
    }
    if (PLUMB_WEB && c.customProperties) {
      // On every event, the event's own props winning over them.
      var common = typeof c.customProperties === 'function' ? c.customProperties(name) : c.customProperties;
      if (common && typeof common === 'object') props = Object.assign({}, common, props);
    }
    if (Object.keys(props).length) payload.p = props;
    if (PLUMB_REVENUE && options && options.revenue) payload.$ = options.revenue;
    if (PLUMB_WEB && options && options.interactive === false) payload.i = false;
    if (PLUMB_HASH) payload.h = 1;
    if (PLUMB_WEB && typeof c.transformRequest === 'function') {
      payload = c.transformRequest(payload);
      if (!payload) return ignored(name, options);
    }

    if (name === 'pageview') engagement.viewed(payload);
    send(payload, options);
  }

  function send(payload, options) {
    fetch(c.endpoint, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify(payload), keepalive: true })
      .then(function (response) {
        if (options && options.callback) options.callback({ status: response.status });
      })
      .catch(function (error) {
        if (options && options.callback) options.callback({ error: error });
      });
  }

  // Engagement of the page on view: the deepest scroll (pixels from the top of the document to the bottom of the
  // window) and the milliseconds it was visible and focused, both since the last engagement event sent for it.
  var engagement = (function () {
    var page = null; // the pageview's payload (u, p, h), null while none was sent
    var listening = false;
    var sentDepth = -1;
    var deepest = 0;
    var engagedMs = 0;
    var since = 0; // when the current stretch of visible, focused time began; 0 outside one

    function height() {
      var b = d.body || {};
      var e = d.documentElement || {};
      return Math.max(b.scrollHeight || 0, b.offsetHeight || 0, b.clientHeight || 0, e.scrollHeight || 0, e.offsetHeight || 0, e.clientHeight || 0);
    }
    function reached() {
      var e = d.documentElement || {};
      var all = height();
      var bottom = (w.scrollY || e.scrollTop || 0) + (w.innerHeight || e.clientHeight || 0);
      return Math.min(all, bottom);
    }
    function measure() {
      deepest = Math.max(deepest, reached());
    }
    function elapsed() {
      return engagedMs + (since ? Date.now() - since : 0);
    }
    // Sent when there is something new to say: a deeper scroll, or 3 s more of attention.
    function flush() {
      var ms = elapsed();
      if (!page || (deepest <= sentDepth && ms < 3000)) return;
      sentDepth = deepest;
      var all = height();
      var payload = { n: 'engagement', u: page.u, d: c.domain, sd: all > 0 ? Math.min(100, Math.round((deepest / all) * 100)) : 0, e: ms };
      if (page.p) payload.p = page.p;
      if (page.h) payload.h = 1;
      engagedMs = 0;
      since = 0;
      send(payload);
    }
    function visibility() {
      if (d.visibilityState === 'visible' && d.hasFocus()) {
        if (!since) since = Date.now();
      } else {
        engagedMs = elapsed();
        since = 0;
        flush();
      }
    }
    return {
      // Called for each pageview: the page left gets its last engagement first (a single-page app's navigation).
      viewed: function (payload) {
        if (page) flush();
        page = payload ? { u: payload.u, p: payload.p, h: payload.h } : null;
        sentDepth = -1;
        engagedMs = 0;
        deepest = reached();
        since = d.visibilityState === 'visible' ? Date.now() : 0;
        if (listening || !page) return;
        listening = true;
        d.addEventListener('scroll', measure, { passive: true });
        d.addEventListener('visibilitychange', visibility);
        w.addEventListener('blur', visibility);
        w.addEventListener('focus', visibility);
        w.addEventListener('pagehide', flush);
      },
    };
  })();

  // Link clicks: outbound links and file downloads. Requests are sent with keepalive, so the navigation that
  // follows does not cut them off and the page need not hold the click back.
  var FILE_TYPES = 'pdf,xlsx,docx,txt,rtf,csv,exe,key,pps,ppt,pptx,7z,pkg,rar,gz,zip,avi,mov,mp4,mpeg,wmv,midi,mp3,wav,wma,dmg'.split(',');

  function linkClicked(event) {
    if (event.type === 'auxclick' && event.button !== 1) return;
    var link = event.target.closest && event.target.closest('a[href]');
    if (!link) return;
    // A tagged link is its tagged event only (Plausible sends one event per click).
    if (PLUMB_TAGGED_EVENTS && taggedParent(link)) return;
    if (PLUMB_OUTBOUND_LINKS && link.host && link.host !== loc.host) {
      return trigger('Outbound Link: Click', { props: { url: link.href } });
    }
    if (PLUMB_FILE_DOWNLOADS) {
      var extension = link.pathname.split('.').pop().toLowerCase();
      if (link.pathname.indexOf('.') >= 0 && FILE_TYPES.some(function (t) { return t.trim().toLowerCase() === extension; })) {
        trigger('File Download', { props: { url: link.href.split('?')[0] } });
      }
    }
  }

  // Tagged events: class="plausible-event-name=Signup plausible-event-plan=pro" ("+" for spaces) on a link,
  // a button (or what they contain, up to three levels) or a form (on submit). Function expressions under the
  // flag, so builds without it leave them out.
  var isTagged, taggedParent, tagged;
  if (PLUMB_TAGGED_EVENTS) {
    isTagged = function (el) {
      return !!(el && el.className && el.className.split && /(^|\s)plausible-event-name(=|--)/.test(el.className));
    };
    taggedParent = function (el) {
      for (var i = 0; el && i <= 3; i++, el = el.parentNode) if (isTagged(el)) return el;
    };
    tagged = function (el, link) {
      var name;
      var props = {};
      el.className.split(/\s+/).forEach(function (cls) {
        var m = /^plausible-event-(.+?)(=|--)(.+)$/.exec(cls);
        if (!m) return;
        var value = m[3].replace(/\+/g, ' ');
        if (m[1] === 'name') name = value;
        else props[m[1]] = value;
      });
      if (link) props.url = link.href;
      if (name) trigger(name, { props: props });
    };
  }

  function start() {
    if (PLUMB_WEB && c.fileDownloads && Array.isArray(c.fileDownloads.fileExtensions)) FILE_TYPES = c.fileDownloads.fileExtensions;
    if (!PLUMB_WEB) {
      var types = script.getAttribute('file-types');
      var extraTypes = script.getAttribute('add-file-types');
      if (types) FILE_TYPES = types.split(',');
      if (extraTypes) FILE_TYPES = FILE_TYPES.concat(extraTypes.split(','));
    }
    if (PLUMB_OUTBOUND_LINKS || PLUMB_FILE_DOWNLOADS || PLUMB_TAGGED_EVENTS) {
      d.addEventListener('click', linkClicked);
      d.addEventListener('auxclick', linkClicked);
    }
    if (PLUMB_TAGGED_EVENTS) {
      d.addEventListener('click', function (event) {
        var el = taggedParent(event.target);
        if (!el || el.tagName === 'FORM' || (event.target.closest && event.target.closest('form'))) return;
        tagged(el, event.target.closest && event.target.closest('a[href]'));
      });
      d.addEventListener('submit', function (event) {
        if (isTagged(event.target)) tagged(event.target);
      });
    }
    // Valid forms that are not tagged (a tagged form is its tagged event), as Plausible's formSubmissions.
    if (PLUMB_WEB && c.formSubmissions) {
      d.addEventListener(
        'submit',
        function (event) {
          var form = event.target;
          if ((form.hasAttribute('novalidate') || form.checkValidity()) && !taggedParent(form)) trigger('Form: Submission');
        },
        true,
      );
    }

    var queue = (w.plausible && w.plausible.q) || [];
    w.plausible = trigger;
    if (PLUMB_WEB) trigger.init = function () {};
    for (var i = 0; i < queue.length; i++) trigger.apply(this, queue[i]);

    if (!PLUMB_MANUAL) {
      var lastPage;
      var page = function () {
        if (!PLUMB_HASH && lastPage === loc.pathname) return;
        lastPage = loc.pathname;
        trigger('pageview');
      };
      if (PLUMB_HASH) w.addEventListener('hashchange', page);
      else if (w.history.pushState) {
        var push = w.history.pushState;
        w.history.pushState = function () {
          push.apply(this, arguments);
          page();
        };
        w.addEventListener('popstate', page);
      }
      if (d.visibilityState === 'prerender') {
        d.addEventListener('visibilitychange', function () {
          if (!lastPage && d.visibilityState === 'visible') page();
        });
      } else page();
    }
  }

  if (!PLUMB_WEB) return start();

  // Plausible's snippet parks init()'s options on plausible.o when it runs first; when this script runs first,
  // the snippet's init() call finds this one. Either way the tracker starts once, with the options.
  var init = function (options) {
    options = options || {};
    c = Object.assign({ endpoint: defaultEndpoint, outboundLinks: true, fileDownloads: true, formSubmissions: true }, options, {
      // The site is the script's (Plausible's per-site script does not let init() change its domain either).
      domain: 'pa-' + PLUMB_SCRIPT_ID,
      autoCapturePageviews: options.autoCapturePageviews !== false,
      // What PLUMB_MANUAL reads in this build.
      manual: options.autoCapturePageviews === false,
    });
    start();
  };
  var stub = w.plausible;
  if (stub && stub.o) return init(stub.o);
  if (!stub) {
    stub = w.plausible = function () {
      (stub.q = stub.q || []).push(arguments);
    };
  }
  stub.init = init;
})();
