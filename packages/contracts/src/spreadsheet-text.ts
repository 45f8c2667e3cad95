/**
 * Text a spreadsheet would run as a formula, made inert for a CSV cell: a `'` before any `=`, `+`,
 * `-`, `@`, tab or carriage return that starts the text, or follows a `;` (and any quotes after it),
 * where a spreadsheet whose list separator is `;` (Excel in most European locales) starts a cell,
 * quoted or not. GS1 serials and lots may hold every one of these characters. One rule for every
 * CSV the product writes (the scans export, the CLI's results, the console's batch results).
 */
export const spreadsheetSafe = (text: string): string => text.replace(/(^|;)("*)([=+\-@\t\r])/g, "$1$2'$3");
