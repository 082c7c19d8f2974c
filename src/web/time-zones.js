// Time zone names for the pages: the browser's own zone and a searchable list, in their current TZ database names.
// Browsers list (and report) some zones by the old names ICU keeps, such as Asia/Calcutta or Europe/Kiev; the
// owner should see and store Asia/Kolkata and Europe/Kyiv.

/** Old name -> current name (TZ database renames and merges the browsers' lists still carry). */
const CURRENT = new Map([
  ['Africa/Asmera', 'Africa/Asmara'],
  ['America/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
  ['America/Catamarca', 'America/Argentina/Catamarca'],
  ['America/Cordoba', 'America/Argentina/Cordoba'],
  ['America/Jujuy', 'America/Argentina/Jujuy'],
  ['America/Mendoza', 'America/Argentina/Mendoza'],
  ['America/Coral_Harbour', 'America/Atikokan'],
  ['America/Indianapolis', 'America/Indiana/Indianapolis'],
  ['America/Louisville', 'America/Kentucky/Louisville'],
  ['America/Godthab', 'America/Nuuk'],
  ['America/Nipigon', 'America/Toronto'],
  ['America/Thunder_Bay', 'America/Toronto'],
  ['America/Rainy_River', 'America/Winnipeg'],
  ['America/Yellowknife', 'America/Edmonton'],
  ['America/Santa_Isabel', 'America/Tijuana'],
  ['Asia/Calcutta', 'Asia/Kolkata'],
  ['Asia/Katmandu', 'Asia/Kathmandu'],
  ['Asia/Rangoon', 'Asia/Yangon'],
  ['Asia/Saigon', 'Asia/Ho_Chi_Minh'],
  ['Asia/Choibalsan', 'Asia/Ulaanbaatar'],
  ['Atlantic/Faeroe', 'Atlantic/Faroe'],
  ['Australia/Currie', 'Australia/Hobart'],
  ['Europe/Kiev', 'Europe/Kyiv'],
  ['Europe/Uzhgorod', 'Europe/Kyiv'],
  ['Europe/Zaporozhye', 'Europe/Kyiv'],
  ['Pacific/Enderbury', 'Pacific/Kanton'],
  ['Pacific/Johnston', 'Pacific/Honolulu'],
  ['Pacific/Ponape', 'Pacific/Pohnpei'],
  ['Pacific/Truk', 'Pacific/Chuuk'],
]);

function known(zone) {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The current name of a zone (the old one when this browser does not know the new one yet). */
export function currentName(zone) {
  const renamed = CURRENT.get(zone);
  return renamed && known(renamed) ? renamed : zone;
}

let names;
/** Every zone this browser knows, by current name, sorted, UTC included. */
export function zoneNames() {
  if (!names) {
    const listed = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    names = [...new Set(['UTC', ...listed.map(currentName)])].sort();
  }
  return names;
}

/** The zone of the viewer's computer, by its current name ('UTC' when the browser does not say). */
export function browserZone() {
  try {
    return currentName(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  } catch {
    return 'UTC';
  }
}

/** Whether `zone` is one the list offers (what the zone field accepts). */
export const isListedZone = (zone) => zoneNames().includes(zone);

/** The time now in a zone, as the viewer reads times ("17:42"), or '' for an unknown zone. */
export function timeNowIn(zone, now = new Date()) {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone: zone, hour: '2-digit', minute: '2-digit' }).format(now);
  } catch {
    return '';
  }
}
