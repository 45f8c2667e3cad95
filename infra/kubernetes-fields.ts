import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Unknown fields in Kubernetes manifests: a misspelt `resouces:` or a `livenessProbe` one level too
 * deep passes the kubernetes-models schemas (they do not forbid extra properties), but kubectl's
 * strict field validation (the default since Kubernetes 1.27) refuses it at apply time. The field
 * names come from the TypeScript declarations kubernetes-models ships (`IDeployment` and what it
 * refers to), read with the TypeScript compiler: no schema is fetched or copied.
 */

/** A kind's declaration: the module kubernetes-models exports it from, and its interface. */
export interface KindDeclaration {
  module: string;
  interfaceName: string;
}

export type UnknownFields = (doc: Record<string, unknown>) => string[];

const compilerOptions: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
};

/**
 * Builds the check for the kinds given by `"apiVersion kind"` (one TypeScript program, about a
 * second). The answer lists each unknown field's path, e.g. `spec.template.spec.containers[0].resouces`.
 */
export function createUnknownFieldsCheck(kinds: Record<string, KindDeclaration>): UnknownFields {
  const names = Object.keys(kinds);
  // A source file that only names the kinds' interfaces, resolved as a file beside this one would be.
  const probe = fileURLToPath(new URL('./__kubernetes_kinds__.ts', import.meta.url));
  const text = [
    ...names.map((name, i) => `import type { ${kinds[name]?.interfaceName} as Kind${i} } from '${kinds[name]?.module}';`),
    `export type Kinds = [${names.map((_, i) => `Kind${i}`).join(', ')}];`,
  ].join('\n');
  const host = ts.createCompilerHost(compilerOptions);
  const readSourceFile = host.getSourceFile;
  const fileExists = host.fileExists;
  host.getSourceFile = (fileName, language, ...rest) =>
    fileName === probe ? ts.createSourceFile(fileName, text, language) : readSourceFile(fileName, language, ...rest);
  host.fileExists = (fileName) => fileName === probe || fileExists(fileName);
  const program = ts.createProgram([probe], compilerOptions, host);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(probe);
  const moduleSymbol = source ? checker.getSymbolAtLocation(source) : undefined;
  const kindsSymbol = moduleSymbol ? checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'Kinds') : undefined;
  if (!kindsSymbol) throw new Error('kubernetes-fields: could not read the kinds');
  const declared = checker.getTypeArguments(checker.getDeclaredTypeOfSymbol(kindsSymbol) as ts.TypeReference);
  const unresolved = names.filter((_, i) => {
    const type = declared[i];
    return !type || type.flags & ts.TypeFlags.Any || checker.getPropertiesOfType(type).length === 0;
  });
  if (unresolved.length > 0) throw new Error(`kubernetes-fields: no declaration found for ${unresolved.join(', ')}`);
  const typeOfKind = new Map(names.map((name, i) => [name, declared[i] as ts.Type]));

  const walk = (value: unknown, declaredType: ts.Type, path: string, found: string[]): void => {
    if (value === null || typeof value !== 'object') return;
    let type = checker.getNonNullableType(declaredType);
    if (Array.isArray(value)) {
      const element = checker.isArrayType(type) ? checker.getTypeArguments(type as ts.TypeReference)[0] : undefined;
      if (element) for (const [index, item] of value.entries()) walk(item, element, `${path}[${index}]`, found);
      return;
    }
    if (type.isUnion()) {
      // IntOrString and the like: only a union with exactly one object member says what fields are.
      const objects = type.types.filter((member) => member.flags & ts.TypeFlags.Object);
      if (objects.length !== 1) return;
      type = objects[0] as ts.Type;
    }
    // A map (labels, annotations, a ConfigMap's data): any key is allowed.
    if (checker.getIndexInfosOfType(type).length > 0) return;
    const properties = checker.getPropertiesOfType(type);
    if (properties.length === 0) return;
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      const property = properties.find((candidate) => candidate.name === key);
      if (property) walk(child, checker.getTypeOfSymbol(property), childPath, found);
      else found.push(childPath);
    }
  };

  return (doc) => {
    const type = typeOfKind.get(`${doc.apiVersion} ${doc.kind}`);
    if (!type) return [];
    const found: string[] = [];
    walk(doc, type, '', found);
    return found;
  };
}
