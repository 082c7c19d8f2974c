// How a page sends a goal, for every tracker Plumb accepts: its own script (Fathom's API), Plausible's and Umami's
// scripts pointed at Plumb (docs/collection.md), in JavaScript and, where the tracker has one, as an HTML attribute.

const escapeAttribute = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** [{ tracker, kind: 'js' | 'html', code }] that send the goal named `name`, one or two per tracker. */
export function goalCode(name) {
  const js = JSON.stringify(name);
  const examples = [
    { tracker: "Plumb's script (or Fathom's)", kind: 'js', code: `fathom.trackEvent(${js})` },
    { tracker: "Plumb's script (or Fathom's), with a value in cents", kind: 'js', code: `fathom.trackEvent(${js}, { _value: 1999 })` },
    { tracker: "Plausible's script", kind: 'js', code: `plausible(${js})` },
    { tracker: "Umami's script", kind: 'js', code: `umami.track(${js})` },
    { tracker: "Umami's script, on click", kind: 'html', code: `<button data-umami-event="${escapeAttribute(name)}">…</button>` },
  ];
  // Plausible reads a class, whose words cannot hold spaces ("+" stands for one) nor a "+" of the name itself.
  if (!/[+"<>&]/.test(name)) {
    examples.splice(3, 0, { tracker: "Plausible's script with tagged events (script.tagged-events.js, or its current snippet), on click", kind: 'html', code: `<button class="plausible-event-name=${name.trim().replace(/\s+/g, '+')}">…</button>` });
  }
  return examples;
}
