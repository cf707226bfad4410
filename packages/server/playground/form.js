// @ts-check
// The input form, built from a JSON Schema (draft 2020-12, as zod 4's z.toJSONSchema writes it): text, textarea,
// number, checkbox and select fields; nested objects and arrays as JSON fields. The "Edit JSON" view shows the
// whole input and stays in sync both ways; keys the schema does not know are kept. `check()` validates against
// the schema (validate.js) and marks the fields that are wrong.
import { messageOf } from './api.js';
import { el } from './dom.js';
import { validateInput } from './validate.js';

/** @typedef {import('./validate.js').JsonSchema} JsonSchema */
/** @typedef {import('./validate.js').Problem} Problem */
/** @typedef {'enum' | 'textarea' | 'string' | 'number' | 'integer' | 'boolean' | 'json'} Kind */

/**
 * One field of the form.
 *
 * @typedef {object} Field
 * @property {string} name
 * @property {HTMLElement} row
 * @property {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} control
 * @property {(message: string | undefined) => void} mark
 * @property {() => unknown} read
 * @property {(v: unknown) => void} write
 */

/**
 * What createInputForm returns.
 *
 * @typedef {object} InputForm
 * @property {() => Record<string, unknown>} read the input; throws an Error with a readable message on bad JSON
 * @property {(obj: Record<string, unknown>) => void} write
 * @property {(mark?: boolean) => Problem[]} check
 * @property {boolean} hasFields
 */

let seq = 0;

/**
 * Drops `anyOf: [X, {type: 'null'}]` wrappers (zod's nullable/optional).
 *
 * @param {JsonSchema | undefined} schema
 * @returns {JsonSchema}
 */
function unwrap(schema) {
  const alts = schema?.anyOf ?? schema?.oneOf;
  if (Array.isArray(alts)) {
    /** @type {(JsonSchema | undefined)[]} */
    const real = alts.filter((/** @type {JsonSchema | undefined} */ s) => s?.type !== 'null');
    if (real.length === 1) return { ...schema, ...real[0], anyOf: undefined, oneOf: undefined };
    if (real.every((s) => s && 'const' in s))
      return { ...schema, enum: real.map((s) => s?.const), anyOf: undefined, oneOf: undefined };
  }
  if (schema && 'const' in schema && !schema.enum) return { ...schema, enum: [schema.const] };
  return schema ?? {};
}

/**
 * @param {string} name
 * @param {JsonSchema} s
 * @returns {Kind}
 */
function kindOf(name, s) {
  if (Array.isArray(s.enum)) return 'enum';
  const type = Array.isArray(s.type) ? s.type.find((/** @type {unknown} */ t) => t !== 'null') : s.type;
  if (type === 'string') return /prompt|text/i.test(name) || (s.maxLength ?? 0) > 200 ? 'textarea' : 'string';
  if (type === 'number' || type === 'integer') return type;
  if (type === 'boolean') return 'boolean';
  return 'json';
}

/**
 * @param {string} name
 * @param {JsonSchema} raw
 * @param {boolean} required
 * @param {() => void} onChange
 * @returns {Field}
 */
function makeField(name, raw, required, onChange) {
  const s = unwrap(raw);
  const kind = kindOf(name, s);
  const id = `f${++seq}-${name.replace(/[^\w-]/g, '_')}`;
  /** @type {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} */
  let control;
  if (kind === 'textarea') control = el('textarea', { rows: 3 });
  else if (kind === 'enum') {
    const select = el('select');
    if (!required) select.append(el('option', { value: '', textContent: '(default)' }));
    s.enum.forEach((/** @type {unknown} */ v, /** @type {number} */ i) =>
      select.append(el('option', { value: String(i), textContent: String(v) })),
    );
    control = select;
  } else if (kind === 'boolean') control = el('input', { type: 'checkbox' });
  else if (kind === 'number' || kind === 'integer') {
    const input = el('input', {
      type: 'number',
      step: s.multipleOf !== undefined ? String(s.multipleOf) : kind === 'integer' ? '1' : 'any',
    });
    const min = s.minimum ?? s.exclusiveMinimum;
    const max = s.maximum ?? s.exclusiveMaximum;
    if (min !== undefined) input.min = String(min);
    if (max !== undefined) input.max = String(max);
    control = input;
  } else if (kind === 'json') control = el('textarea', { rows: 3, className: 'mono', spellcheck: false });
  else control = el('input', { type: 'text' });
  /** The checkbox of a boolean field (its `checked` and `indeterminate`). */
  const box = /** @type {HTMLInputElement} */ (control);
  control.id = id;
  control.name = name;
  if (s.maxLength !== undefined && 'maxLength' in control) control.maxLength = s.maxLength;
  if (required) control.setAttribute('aria-required', 'true');
  if (kind !== 'boolean' && kind !== 'enum' && s.default !== undefined)
    /** @type {HTMLInputElement | HTMLTextAreaElement} */ (control).placeholder =
      `default: ${JSON.stringify(s.default)}`;

  const hintText = [s.title, s.description, kind === 'json' ? 'JSON value' : '', rangeText(s)]
    .filter(Boolean)
    .join(' · ');
  const hint = el('small', { id: `${id}-hint`, className: 'hint', textContent: hintText });
  if (hintText) control.setAttribute('aria-describedby', hint.id);
  const label = el('label', { htmlFor: id, textContent: name + (required ? ' *' : '') });
  const row = el(
    'div',
    { className: `field field-${kind}` },
    kind === 'boolean' ? [control, label, hint] : [label, control, hint],
  );
  control.addEventListener(kind === 'boolean' || kind === 'enum' ? 'change' : 'input', onChange);

  const problem = el('small', { id: `${id}-problem`, className: 'field-problem error', hidden: true });
  row.append(problem);
  /** @type {Field} */
  const field = {
    name,
    row,
    control,
    /** Shows `message` under the field (and marks it invalid), or clears it. */
    mark(message) {
      problem.textContent = message ? `${name} ${message}` : '';
      problem.hidden = !message;
      if (message) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
      control.setAttribute(
        'aria-describedby',
        [hintText ? hint.id : '', message ? problem.id : ''].filter(Boolean).join(' '),
      );
    },
    /** The value to send, or undefined to leave the key out. Throws on bad JSON. */
    read() {
      if (kind === 'boolean') return box.indeterminate ? undefined : box.checked;
      if (kind === 'enum') return control.value === '' ? undefined : s.enum[Number(control.value)];
      const v = control.value;
      if (v === '') return undefined;
      if (kind === 'number' || kind === 'integer') return Number(v);
      if (kind === 'json') return JSON.parse(v);
      return v;
    },
    write(v) {
      if (kind === 'boolean') {
        box.indeterminate = v === undefined && !required;
        box.checked = v === true;
      } else if (kind === 'enum') {
        const i = s.enum.indexOf(v);
        control.value = i < 0 ? (required ? '0' : '') : String(i);
      } else if (kind === 'json') control.value = v === undefined ? '' : JSON.stringify(v, null, 2);
      else control.value = v === undefined ? '' : String(v);
    },
  };
  field.write(s.default);
  return field;
}

/** @param {JsonSchema} s */
function rangeText(s) {
  // zod writes ±Number.MAX_SAFE_INTEGER for .int(): not worth showing.
  /** @param {unknown} v */
  const real = (v) => (typeof v === 'number' && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined);
  const min = real(s.minimum ?? s.exclusiveMinimum);
  const max = real(s.maximum ?? s.exclusiveMaximum);
  if (min !== undefined && max !== undefined) return `${min} to ${max}`;
  if (min !== undefined) return `at least ${min}`;
  if (max !== undefined) return `at most ${max}`;
  return '';
}

/**
 * Renders the form for `schema` into `container`; `onChange()` fires on every edit.
 * Returns `{ read(): object, write(object) }`; `read` throws an Error with a readable message on bad JSON.
 *
 * @param {HTMLElement} container
 * @param {JsonSchema | undefined} schema
 * @param {Record<string, unknown> | undefined} initial
 * @param {() => void} onChange
 * @returns {InputForm}
 */
export function createInputForm(container, schema, initial, onChange) {
  container.replaceChildren();
  const s = unwrap(schema);
  /** @type {Record<string, JsonSchema> | undefined} */
  const props = s && typeof s.properties === 'object' ? s.properties : undefined;
  const required = new Set(Array.isArray(s?.required) ? s.required : []);
  /** @type {Record<string, unknown>} */
  let extra = {};
  /** @type {Field[]} */
  const fields = [];
  const sync = () => {
    if (!jsonBox.hidden) return onChange();
    try {
      jsonArea.value = JSON.stringify(read(), null, 2);
      jsonError.textContent = '';
    } catch (err) {
      jsonError.textContent = messageOf(err);
    }
    onChange();
  };

  const fieldBox = el('div', { className: 'fields' });
  if (props) for (const [name, p] of Object.entries(props)) fields.push(makeField(name, p, required.has(name), sync));
  fieldBox.append(...fields.map((f) => f.row));

  const jsonId = `json${++seq}`;
  const jsonArea = el('textarea', { id: jsonId, rows: 8, className: 'mono', spellcheck: false });
  const jsonError = el('p', { className: 'error', role: 'alert' });
  const jsonBox = el('div', { className: 'json-box' }, [
    el('label', { htmlFor: jsonId, textContent: 'Input (JSON)' }),
    jsonArea,
    jsonError,
  ]);
  const toggle = el('button', { type: 'button', className: 'secondary', textContent: 'Edit JSON' });
  toggle.setAttribute('aria-expanded', 'false');
  toggle.setAttribute('aria-controls', jsonId);

  /** @param {boolean} on */
  const showJson = (on) => {
    jsonBox.hidden = !on;
    fieldBox.hidden = on || fields.length === 0;
    toggle.setAttribute('aria-expanded', String(on));
    toggle.textContent = on ? 'Back to form' : 'Edit JSON';
    if (on) jsonArea.value = JSON.stringify(readFields(), null, 2);
  };
  toggle.addEventListener('click', () => {
    if (!jsonBox.hidden) {
      try {
        write(JSON.parse(jsonArea.value));
      } catch (err) {
        jsonError.textContent = `Not valid JSON: ${messageOf(err)}`;
        return;
      }
    }
    showJson(jsonBox.hidden);
  });
  jsonArea.addEventListener('input', () => {
    try {
      const v = JSON.parse(jsonArea.value);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('the input must be a JSON object');
      writeFields(v);
      jsonError.textContent = '';
    } catch (err) {
      jsonError.textContent = `Not valid JSON: ${messageOf(err)}`;
    }
    onChange();
  });

  /** @returns {Record<string, unknown>} */
  function readFields() {
    const out = { ...extra };
    for (const f of fields) {
      let v;
      try {
        v = f.read();
      } catch (err) {
        throw new Error(`${f.name}: not valid JSON (${messageOf(err)})`);
      }
      if (v === undefined) delete out[f.name];
      else out[f.name] = v;
    }
    return out;
  }
  /** @param {Record<string, unknown>} obj */
  function writeFields(obj) {
    extra = {};
    const known = new Set(fields.map((f) => f.name));
    for (const [k, v] of Object.entries(obj)) if (!known.has(k)) extra[k] = v;
    for (const f of fields) f.write(obj[f.name]);
  }
  /** @returns {Record<string, unknown>} */
  function read() {
    if (jsonBox.hidden) return readFields();
    let v;
    try {
      v = JSON.parse(jsonArea.value);
    } catch (err) {
      throw new Error(`Input is not valid JSON: ${messageOf(err)}`);
    }
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw new Error('The input must be a JSON object, e.g. {"prompt": "..."}');
    return v;
  }
  /** @param {Record<string, unknown>} obj */
  function write(obj) {
    writeFields(obj);
    jsonArea.value = JSON.stringify(obj, null, 2);
  }

  const bar = el('div', { className: 'form-bar' }, [toggle]);
  container.append(fieldBox, jsonBox, bar);
  if (initial) write(initial);
  showJson(fields.length === 0);
  if (fields.length === 0) {
    toggle.hidden = true;
    jsonArea.value = JSON.stringify(initial ?? {}, null, 2);
  }
  let marking = false;
  /** The input's problems under the schema; with `mark`, shown on the fields (and kept up to date from then on). */
  function check(mark = marking) {
    /** @type {Problem[]} */
    let problems;
    try {
      problems = validateInput(schema, read());
    } catch (err) {
      problems = [{ name: 'input', message: messageOf(err) }];
    }
    if (mark) {
      marking = true;
      for (const f of fields) f.mark(problems.find((p) => p.name === f.name)?.message);
    }
    return problems;
  }
  return { read, write, check, hasFields: fields.length > 0 };
}
