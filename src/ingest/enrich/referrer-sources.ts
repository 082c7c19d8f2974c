// Known referrer sources: Plumb's own list, written for Plumb and MIT-licensed like the rest of the project.
//
// Keys are host suffixes, matched on whole labels: `facebook.com` covers `facebook.com`, `m.facebook.com` and
// `l.facebook.com`, never `notfacebook.com`. The longest matching suffix wins, so `mail.google.com` (Gmail)
// beats `google.*` (Google). A key ending in `.*` stands for that name under any top-level domain, including
// country domains with a second level (`google.*` matches `google.com`, `google.de`, `google.co.uk`,
// `google.com.au`); at the same length an exact key beats a `.*` key (`yahoo.co.jp` over `yahoo.*`).
//
// To add a source: add `'host-suffix': 'Display name'` in the right group, keep display names consistent
// with the existing ones (the name is what reports group by), add a case to
// test/ingest/enrich/referrer.test.ts, and do not guess hosts you have not seen send traffic.

export const REFERRER_SOURCES: ReadonlyMap<string, string> = new Map([
  // Search engines
  ['google.*', 'Google'],
  ['bing.com', 'Bing'],
  ['duckduckgo.com', 'DuckDuckGo'],
  ['yahoo.*', 'Yahoo!'],
  ['yahoo.co.jp', 'Yahoo Japan'],
  ['yandex.*', 'Yandex'],
  ['ya.ru', 'Yandex'],
  ['baidu.com', 'Baidu'],
  ['ecosia.org', 'Ecosia'],
  ['search.brave.com', 'Brave Search'],
  ['qwant.com', 'Qwant'],
  ['startpage.com', 'Startpage'],
  ['naver.com', 'Naver'],
  ['seznam.cz', 'Seznam'],
  ['kagi.com', 'Kagi'],
  ['search.aol.com', 'AOL'],
  ['ask.com', 'Ask'],
  ['sogou.com', 'Sogou'],
  ['so.com', '360 Search'],
  ['daum.net', 'Daum'],
  ['mojeek.com', 'Mojeek'],
  ['search.lilo.org', 'Lilo'],
  ['metager.org', 'MetaGer'],
  ['swisscows.com', 'Swisscows'],
  ['presearch.com', 'Presearch'],
  ['msn.com', 'MSN'],

  // AI assistants and answer engines
  ['chatgpt.com', 'ChatGPT'],
  ['chat.openai.com', 'ChatGPT'],
  ['perplexity.ai', 'Perplexity'],
  ['claude.ai', 'Claude'],
  ['gemini.google.com', 'Gemini'],
  ['bard.google.com', 'Gemini'],
  ['copilot.microsoft.com', 'Copilot'],
  ['chat.deepseek.com', 'DeepSeek'],
  ['chat.mistral.ai', 'Le Chat'],
  ['you.com', 'You.com'],
  ['phind.com', 'Phind'],

  // Social networks, communities, messaging
  ['facebook.com', 'Facebook'],
  ['fb.com', 'Facebook'],
  ['fb.me', 'Facebook'],
  ['messenger.com', 'Facebook Messenger'],
  ['instagram.com', 'Instagram'],
  ['threads.net', 'Threads'],
  ['threads.com', 'Threads'],
  ['twitter.com', 'Twitter'],
  ['x.com', 'Twitter'],
  ['t.co', 'Twitter'],
  ['linkedin.com', 'LinkedIn'],
  ['lnkd.in', 'LinkedIn'],
  ['reddit.com', 'Reddit'],
  ['redd.it', 'Reddit'],
  ['pinterest.*', 'Pinterest'],
  ['pin.it', 'Pinterest'],
  ['youtube.com', 'YouTube'],
  ['youtu.be', 'YouTube'],
  ['tiktok.com', 'TikTok'],
  ['snapchat.com', 'Snapchat'],
  ['tumblr.com', 'Tumblr'],
  ['news.ycombinator.com', 'Hacker News'],
  ['lobste.rs', 'Lobsters'],
  ['bsky.app', 'Bluesky'],
  ['telegram.org', 'Telegram'],
  ['t.me', 'Telegram'],
  ['whatsapp.com', 'WhatsApp'],
  ['wa.me', 'WhatsApp'],
  ['discord.com', 'Discord'],
  ['discordapp.com', 'Discord'],
  ['discord.gg', 'Discord'],
  ['slack.com', 'Slack'],
  ['vk.com', 'VK'],
  ['vk.ru', 'VK'],
  ['ok.ru', 'Odnoklassniki'],
  ['weibo.com', 'Weibo'],
  ['weibo.cn', 'Weibo'],
  ['quora.com', 'Quora'],
  ['medium.com', 'Medium'],
  ['substack.com', 'Substack'],
  ['producthunt.com', 'Product Hunt'],
  ['github.com', 'GitHub'],
  ['gitlab.com', 'GitLab'],
  ['stackoverflow.com', 'Stack Overflow'],
  ['stackexchange.com', 'Stack Exchange'],
  ['dev.to', 'Dev.to'],
  ['indiehackers.com', 'Indie Hackers'],
  ['flipboard.com', 'Flipboard'],
  ['news.google.*', 'Google News'],
  ['wikipedia.org', 'Wikipedia'],
  ['twitch.tv', 'Twitch'],
  ['line.me', 'LINE'],

  // Webmail
  ['mail.google.com', 'Gmail'],
  ['outlook.live.com', 'Outlook'],
  ['outlook.office.com', 'Outlook'],
  ['outlook.office365.com', 'Outlook'],
  ['mail.yahoo.*', 'Yahoo Mail'],
  ['mail.proton.me', 'Proton Mail'],
  ['mail.aol.com', 'AOL Mail'],
]);

// Second-level labels under which registries sell names in many country domains (`co.uk`, `com.au`, `ne.jp`).
const COUNTRY_SECOND_LEVELS = new Set(['co', 'com', 'net', 'org', 'ne', 'or', 'ac', 'gov', 'edu', 'gob', 'go']);

/** The display name of a known source for a lower-case host (no scheme, no port); undefined when unknown. */
export function knownReferrerSource(host: string): string | undefined {
  const labels = host.split('.');
  const n = labels.length;
  const last = labels[n - 1] ?? '';
  const secondLast = labels[n - 2] ?? '';
  // How many trailing labels form the "any top-level domain" part a `.*` key stands for.
  const tld = n >= 3 && last.length === 2 && COUNTRY_SECOND_LEVELS.has(secondLast) ? 2 : 1;
  for (let i = 0; i < n; i++) {
    const exact = REFERRER_SOURCES.get(labels.slice(i).join('.'));
    if (exact !== undefined) return exact;
    if (i < n - tld) {
      const wildcard = REFERRER_SOURCES.get(`${labels.slice(i, n - tld).join('.')}.*`);
      if (wildcard !== undefined) return wildcard;
    }
  }
  return undefined;
}
