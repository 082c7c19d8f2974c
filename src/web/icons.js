// The dashboard's one icon set: lucide's icon outlines (bundled, imported one by one so only these are shipped),
// drawn as inline SVG that takes the text colour and size around it.

import {
  Calendar, Check, ChevronDown, ChevronLeft, ChevronRight, Download, Ellipsis, Monitor, Moon, Sun, Trash2, Users, X,
} from 'lucide';
import { h } from './ui.js';

const ICONS = {
  calendar: Calendar,
  check: Check,
  'chevron-down': ChevronDown,
  'chevron-left': ChevronLeft,
  'chevron-right': ChevronRight,
  download: Download,
  more: Ellipsis,
  monitor: Monitor,
  moon: Moon,
  sun: Sun,
  trash: Trash2,
  users: Users,
  x: X,
};

/** `<${Icon} name="calendar" />`: decorative (aria-hidden); the control it sits in carries the words. */
export function Icon({ name, size = 16 }) {
  const node = ICONS[name];
  if (!node) throw new Error(`no icon named ${name}`);
  return h(
    'svg',
    {
      class: `icon icon-${name}`, width: size, height: size, viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor',
      'stroke-width': 2, 'stroke-linecap': 'round', 'stroke-linejoin': 'round', 'aria-hidden': 'true', focusable: 'false',
    },
    node.map(([tag, attrs]) => h(tag, attrs)),
  );
}
