if (typeof globalThis.navigator === 'undefined') globalThis.navigator = { language: 'en-US' }
const { buildSchemasFromVersion, getLocalSchemaVersions, parseStandaloneString } = await import('hed-validator')
console.log(getLocalSchemaVersions())
const s = await buildSchemasFromVersion('8.3.0')
for (const str of ['Sensory-event, Visual-presentation, (Red, Circle)', 'Sensory-event, Blech', 'Duration/3 s, Red', 'Duration/3 xyz', '(Red, Circle', 'Red,, Blue', 'Onset', 'Event/Sensory-event', 'Item/Blech']) {
  const [p, errs, warns] = parseStandaloneString(str, s)
  console.log(str, JSON.stringify(errs.map(e=>[e.internalCode,e.hedCode,e.level,e.message])), JSON.stringify(warns.map(e=>[e.internalCode,e.hedCode,e.level,e.message])))
}
