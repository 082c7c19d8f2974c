// A site's conversion goals (the API's "events") and milestones: list, add, edit and delete.

import { api, listAll } from './api.js';
import { field, fill, h, main, pageData, select, statusLine } from './dom.js';

const CURRENCIES = ['dollar', 'pound', 'euro', 'yuan', 'peso', 'shekel', 'yen', 'won', 'hryvnia', 'franc', 'rupee', 'integer', 'none'];
const currencyOptions = CURRENCIES.map((c) => [c, c]);

/** A delete button that asks once more in place (no dialogs). */
function deleteButton(what, onConfirm) {
  const button = h('button', { type: 'button', class: 'danger small' }, 'Delete');
  let armed = false;
  button.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      button.textContent = 'Confirm delete';
      button.setAttribute('aria-label', `Confirm: delete ${what}`);
      return;
    }
    button.disabled = true;
    await onConfirm();
  });
  button.setAttribute('aria-label', `Delete ${what}`);
  return button;
}

/**
 * One kind of a site's resources (goals, milestones) through its /v1 collection: a table with edit and delete in
 * place, and a form to add one. `addForm()` and `editForm(item)` give the controls, the first to focus and the
 * request body; `cells(item)` the contents of each column before the actions.
 */
function resourceSection({ siteId, kind, plural, title, intro, collection, headers, cells, addForm, editForm }) {
  const url = `/v1/sites/${siteId}/${collection}`;
  const section = h('section', { class: 'card', 'aria-labelledby': `${plural}-h` });
  const status = statusLine();
  const list = h('div');
  const attempt = async (work) => {
    try {
      await work();
    } catch (err) {
      status.error(err.message);
    }
  };

  const add = addForm();
  const form = h('form', { class: 'row wrap', 'aria-label': `Add a ${kind}` }, ...add.fields, h('button', { type: 'submit' }, `Add ${kind}`));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void attempt(async () => {
      const body = add.body();
      await api('POST', url, body);
      status.ok(`Added ${kind} ${body.name}.`);
      add.reset();
      await render();
    });
  });

  async function render() {
    const items = await listAll(url);
    if (items.length === 0) {
      fill(list, h('p', { class: 'muted' }, `No ${plural} yet.`));
      return;
    }
    fill(list, h('table', {},
      h('thead', {}, h('tr', {}, [...headers, 'Actions'].map((text) => h('th', { scope: 'col' }, text)))),
      h('tbody', {}, items.map((item) => row(item)))));
  }

  function row(item) {
    const tr = h('tr', { [`data-${kind}`]: item.id });
    const view = () =>
      fill(tr,
        cells(item).map((contents) => h('td', {}, contents)),
        h('td', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit ${kind} ${item.name}`, onclick: edit }, 'Edit'),
          deleteButton(`${kind} ${item.name}`, () =>
            attempt(async () => {
              await api('DELETE', `${url}/${item.id}`);
              status.ok(`Deleted ${kind} ${item.name}.`);
              await render();
            }))));
    function edit() {
      const controls = editForm(item);
      const editing = h('form', { class: 'row wrap' }, ...controls.fields,
        h('button', { type: 'submit' }, 'Save'), h('button', { type: 'button', class: 'secondary', onclick: view }, 'Cancel'));
      editing.addEventListener('submit', (event) => {
        event.preventDefault();
        void attempt(async () => {
          item = await api('POST', `${url}/${item.id}`, controls.body());
          status.ok(`Saved ${kind} ${item.name}.`);
          view();
        });
      });
      fill(tr, h('td', { colspan: headers.length + 1 }, editing));
      controls.first.focus();
    }
    view();
    return tr;
  }

  fill(section, h('h2', { id: `${plural}-h` }, title), h('p', { class: 'muted' }, intro), list, form, status.el);
  return { section, render };
}

function goalsSection(siteId) {
  return resourceSection({
    siteId,
    kind: 'goal',
    plural: 'goals',
    title: 'Goals',
    intro: 'Conversions the tracking script sends with fathom.trackEvent(name).',
    collection: 'events',
    headers: ['Name', 'Code to send it'],
    cells: (g) => [
      g.name,
      [h('code', {}, `fathom.trackEvent(${JSON.stringify(g.name)})`), h('br'), h('small', { class: 'muted' }, `id ${g.id}`)],
    ],
    addForm() {
      const name = h('input', { name: 'name', required: true, maxlength: 255 });
      const currency = select('currency', currencyOptions, 'dollar');
      return {
        fields: [field('Goal name', name), field('Value currency', currency)],
        body: () => ({ name: name.value, currency: currency.value }),
        reset: () => (name.value = ''),
      };
    },
    editForm(g) {
      const name = h('input', { name: 'name', required: true, maxlength: 255, value: g.name });
      // The API does not return a goal's currency in lists, so "keep" leaves it as it is.
      const currency = select('currency', [['', 'Keep current currency'], ...currencyOptions], '');
      return {
        fields: [field('Goal name', name), field('Value currency', currency)],
        first: name,
        body: () => ({ name: name.value, ...(currency.value ? { currency: currency.value } : {}) }),
      };
    },
  });
}

function milestonesSection(siteId) {
  const dateOf = (m) => m.milestone_date.slice(0, 10);
  return resourceSection({
    siteId,
    kind: 'milestone',
    plural: 'milestones',
    title: 'Milestones',
    intro: 'Dated notes drawn on the report chart (a launch, a campaign).',
    collection: 'milestones',
    headers: ['Name', 'Date'],
    cells: (m) => [m.name, dateOf(m)],
    addForm() {
      const name = h('input', { name: 'name', required: true, maxlength: 30 });
      const date = h('input', { name: 'milestone_date', type: 'date', required: true });
      return {
        fields: [field('Milestone name', name), field('Date', date)],
        body: () => ({ name: name.value, milestone_date: date.value }),
        reset: () => (name.value = ''),
      };
    },
    editForm(m) {
      const name = h('input', { name: 'name', required: true, maxlength: 30, value: m.name });
      const date = h('input', { name: 'milestone_date', type: 'date', required: true, value: dateOf(m) });
      return {
        fields: [field('Milestone name', name), field('Date', date)],
        first: name,
        body: () => ({ name: name.value, milestone_date: date.value }),
      };
    },
  });
}

export async function goalsPage() {
  const siteId = pageData('site');
  const goals = goalsSection(siteId);
  const milestones = milestonesSection(siteId);
  fill(main(), h('h1', {}, `Goals and milestones of ${pageData('siteName')}`),
    h('p', { class: 'links' }, h('a', { href: `/sites/${siteId}` }, 'Report'), ' · ', h('a', { href: `/sites/${siteId}/settings` }, 'Site settings')),
    goals.section, milestones.section);
  await Promise.all([goals.render(), milestones.render()]);
}
