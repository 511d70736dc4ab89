// Validates batches of HED strings with the npm `hed-validator`, kept warm by casework.
// Protocol: one JSON request per line on stdin, one JSON answer per line on stdout.
//   {"id": 1, "op": "versions"}                          -> {"id": 1, "versions": [...]}
//   {"id": 2, "schema": "8.3.0", "strings": ["Red", ...]} -> {"id": 2, "results": [{"errors": [...], "warnings": [...]}]}
//   any failure                                           -> {"id": n, "error": "..."}

// hed-validator's bundle reads navigator.language, which Node only has from version 21 on.
if (typeof globalThis.navigator === 'undefined') globalThis.navigator = { language: 'en-US' }
const hed = await import('hed-validator')
import { createInterface } from 'node:readline'

const schemas = new Map() // version -> Promise<Schemas>, built once per version

function issueJson(issue) {
  // Messages come as "ERROR: [CODE] text  (For more information ...)": keep the text.
  const text = String(issue.message)
    .replace(/^(ERROR|WARNING): \[[A-Z_]+\] /, '')
    .replace(/\s*\(For more information on this HED .*$/s, '')
  // hed-validator 4.2.0 has no message for its own "unclosedParentheses" and reports
  // INTERNAL_ERROR; the HED specification's code for it is PARENTHESES_MISMATCH.
  const params = issue.parameters || {}
  if (issue.hedCode === 'INTERNAL_ERROR' && String(params.internalCode) === 'unclosedParentheses') {
    return { code: 'PARENTHESES_MISMATCH', internal: 'unclosedParentheses', message: String(params.msg || text), tag: '' }
  }
  const tag = issue.parameters && issue.parameters.tag !== undefined ? String(issue.parameters.tag) : ''
  return { code: issue.hedCode, internal: issue.internalCode, message: text, tag }
}

async function answer(request) {
  if (request.op === 'versions') return { versions: hed.getLocalSchemaVersions() }
  const version = String(request.schema)
  if (!hed.getLocalSchemaVersions().includes(version)) {
    return { error: `hed-validator has no bundled schema ${version}` }
  }
  if (!schemas.has(version)) schemas.set(version, hed.buildSchemasFromVersion(version))
  const built = await schemas.get(version)
  const results = request.strings.map((text) => {
    try {
      const [, errors, warnings] = hed.parseStandaloneString(String(text), built)
      return { errors: errors.map(issueJson), warnings: warnings.map(issueJson) }
    } catch (err) {
      // Some checks (duplicate tags) throw an IssueError instead of returning the issue.
      if (err && err.issue) return { errors: [issueJson(err.issue)], warnings: [] }
      throw err
    }
  })
  return { results }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (!line.trim()) continue
  let id = null
  try {
    const request = JSON.parse(line)
    id = request.id ?? null
    process.stdout.write(JSON.stringify({ id, ...(await answer(request)) }) + '\n')
  } catch (err) {
    process.stdout.write(JSON.stringify({ id, error: String(err && err.message ? err.message : err) }) + '\n')
  }
}
// The bundle leaves a timer behind; stdin closed means casework is done with us.
process.exit(0)
