// SPDX-License-Identifier: GPL-2.0-or-later
// 46-otlp.sh: decodes OTLP/HTTP bodies with the OpenTelemetry project's own
// generated schema (npm @opentelemetry/otlp-transformer's protobufjs root of
// opentelemetry-proto), never with a decoder of ours, and prints their spans
// as JSON lines: node otlp_decode.js NPM_PREFIX BODY...
// Strict as the OpenTelemetry Collector (Go's protobuf) is: a string field
// that is not valid UTF-8 fails the whole body, where protobufjs alone would
// read it with replacement characters. A bytes attribute prints as
// {"bytes": HEX}.
'use strict';
const fs = require('fs');
const pb = require(process.argv[2] + '/node_modules/protobufjs/minimal');
const utf8 = new TextDecoder('utf-8', { fatal: true });
for (const R of [pb.Reader, pb.BufferReader]) {
	R.prototype.string = function strictString() {
		try {
			return utf8.decode(this.bytes());
		} catch (e) {
			throw new Error('a string field is not valid UTF-8 (a strict receiver ' +
				'refuses the whole batch)');
		}
	};
}
const root = require(process.argv[2] +
	'/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Req = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const hex = (b) => Buffer.from(b || '', 'base64').toString('hex');

function value(v) {
	if (v.stringValue !== undefined && v.stringValue !== null && v.stringValue !== '')
		return v.stringValue;
	if (v.bytesValue !== undefined && v.bytesValue !== null)
		return { bytes: hex(v.bytesValue) };
	if (v.intValue !== undefined && v.intValue !== null)
		return v.intValue.toString();
	return v.stringValue;
}

function attrs(list) {
	const out = {};
	for (const kv of list || [])
		out[kv.key] = value(kv.value);
	return out;
}

for (const file of process.argv.slice(3)) {
	const req = Req.decode(fs.readFileSync(file));
	const o = Req.toObject(req, { longs: String, bytes: String, enums: Number });
	for (const rs of o.resourceSpans) {
		const res = attrs(rs.resource.attributes);
		for (const ss of rs.scopeSpans) {
			for (const s of ss.spans) {
				console.log(JSON.stringify({
					post: file, resource: res, scope: ss.scope,
					traceId: hex(s.traceId), spanId: hex(s.spanId),
					parent: hex(s.parentSpanId), name: s.name, kind: s.kind,
					start: s.startTimeUnixNano, end: s.endTimeUnixNano,
					attributes: attrs(s.attributes),
					status: s.status || null,
				}));
			}
		}
	}
}
