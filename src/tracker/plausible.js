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
 * As Plausible's script does, nothing is sent from localhost (unless `local`), from automated browsers (unless
 * window.__plausible is set) or when localStorage.plausible_ignore is "true".
 */
(function () {
  var w = window;
  var d = document;
  var loc = location;
  var script = PLUMB_COMPAT ? d.getElementById('plausible') : d.currentScript;
  if (!script) return;
  var endpoint = script.getAttribute('data-api') || new URL(script.src, loc.href).origin + '/api/event';
  var domain = script.getAttribute('data-domain') || loc.hostname;

  function skip(options) {
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
    if (!PLUMB_LOCAL && (/^localhost$|^127(\.[0-9]+){0,2}\.[0-9]+$|^\[::1?\]$/.test(loc.hostname) || loc.protocol === 'file:')) return skip(options);
    if ((w._phantom || w.__nightmare || navigator.webdriver || w.Cypress) && !w.__plausible) return skip(options);
    try {
      if (w.localStorage.plausible_ignore === 'true') return skip(options);
    } catch (e) {}
    if (PLUMB_EXCLUSIONS && name === 'pageview' && excluded()) return skip(options);

    var payload = { n: name, u: loc.href, d: domain, r: d.referrer || null };
    if (PLUMB_MANUAL && options && (options.u || options.url)) payload.u = options.u || options.url;
    var props = (options && options.props) || {};
    if (PLUMB_PAGEVIEW_PROPS) {
      [].forEach.call(script.attributes, function (a) {
        if (a.name.indexOf('event-') === 0 && !(a.name.slice(6) in props)) props[a.name.slice(6)] = a.value;
      });
    }
    if (Object.keys(props).length) payload.p = props;
    if (PLUMB_REVENUE && options && options.revenue) payload.$ = options.revenue;
    if (PLUMB_HASH) payload.h = 1;

    fetch(endpoint, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify(payload), keepalive: true })
      .then(function (response) {
        if (options && options.callback) options.callback({ status: response.status });
      })
      .catch(function (error) {
        if (options && options.callback) options.callback({ error: error });
      });
  }

  // Link clicks: outbound links and file downloads. Requests are sent with keepalive, so the navigation that
  // follows does not cut them off and the page need not hold the click back.
  var FILE_TYPES = (script.getAttribute('file-types') || 'pdf,xlsx,docx,txt,rtf,csv,exe,key,pps,ppt,pptx,7z,pkg,rar,gz,zip,avi,mov,mp4,mpeg,wmv,midi,mp3,wav,wma,dmg').split(',');
  var extraTypes = script.getAttribute('add-file-types');
  if (extraTypes) FILE_TYPES = FILE_TYPES.concat(extraTypes.split(','));

  function linkClicked(event) {
    if (event.type === 'auxclick' && event.button !== 1) return;
    var link = event.target.closest && event.target.closest('a[href]');
    if (!link) return;
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
  if (PLUMB_OUTBOUND_LINKS || PLUMB_FILE_DOWNLOADS) {
    d.addEventListener('click', linkClicked);
    d.addEventListener('auxclick', linkClicked);
  }

  // Tagged events: class="plausible-event-name=Signup plausible-event-plan=pro" ("+" for spaces) on a link,
  // a button (or what they contain) or a form (on submit).
  function tagged(el) {
    var name;
    var props = {};
    (el.className && el.className.split ? el.className.split(/\s+/) : []).forEach(function (c) {
      var m = /^plausible-event-(.+)=(.+)$/.exec(c);
      if (!m) return;
      var value = m[2].replace(/\+/g, ' ');
      if (m[1] === 'name') name = value;
      else props[m[1]] = value;
    });
    if (name) trigger(name, { props: props });
  }
  if (PLUMB_TAGGED_EVENTS) {
    d.addEventListener('click', function (event) {
      var el = event.target.closest && event.target.closest('a,button,[class*="plausible-event-name="]');
      if (el && el.tagName !== 'FORM') tagged(el);
    });
    d.addEventListener('submit', function (event) {
      tagged(event.target);
    });
  }

  var queue = (w.plausible && w.plausible.q) || [];
  w.plausible = trigger;
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
})();
