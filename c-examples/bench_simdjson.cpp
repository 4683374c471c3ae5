// bench_simdjson: membrane-frame's readers against simdjson on our own documents, in the
// same process (scripts/bench-simdjson.sh fetches simdjson, builds this and runs it).
//
// Every side fills the same plain struct with every field of the document: strings as
// views (decoded where they hold escapes), numbers, ranges, the shape. membrane reads
// through the C ABI: mbr_envelope_parse_view_decoded and mbr_identity_parse_view_decoded
// decode the strings with escapes into a buffer, as simdjson does into its own, and
// apply every rule of SPEC sections 2-4 (strict JSON, duplicate keys, field rules);
// simdjson On-Demand and DOM (given their padded input) only extract. Before timing,
// the three structs of every document are compared field by field.
//
// Timing: thread CPU time; ROUNDS rounds, each timing the three sides over the whole
// set of documents in an order that rotates; the figures are medians over the rounds,
// the ratios medians of the per-round ratios (above 1: membrane slower).
//
//   usage: bench_simdjson INPUT_DIR [ROUNDS]   (inputs: scripts/bench_simdjson_inputs.py)
#include "membrane_frame.h"
#include "simdjson.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace {

using simdjson::dom::element;

[[noreturn]] void die(const std::string &what) {
    std::fprintf(stderr, "bench_simdjson: %s\n", what.c_str());
    std::exit(1);
}

double thread_ns() {
    timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// ---- the struct every side fills -------------------------------------------------------

struct Identity {
    std::string_view payload_hash, model_id, model_revision, tokenizer_name, tokenizer_revision, dtype;
    int64_t layer_range[2] = {0, 0}, head_range[2] = {0, 0}, token_span[2] = {0, 0};
    int64_t shape[16] = {};
    size_t shape_len = 0;
};

struct Envelope {
    uint64_t schema_version = 0;
    std::string_view tenant_id, payload_ref, consistency, fingerprint_compat;
    bool has_payload_ref = false;
    uint64_t payload_size = 0, version_id = 0, hlc = 0;
    double ttl = 0, reuse_score = 0;
    Identity identity;
};

// Decoded strings of the membrane side live here (only those with escapes): `values`
// for the parse to decode them into (a document's length holds them all), `bytes` for
// any that did not fit.
struct Arena {
    std::vector<char> values = std::vector<char>(1 << 20);
    std::vector<char> bytes = std::vector<char>(1 << 20);
    size_t used = 0;
    void reset() { used = 0; }
    std::string_view text(mbr_text value) {
        if (!value.has_escapes) return {value.ptr, value.len};
        size_t len = 0;
        if (mbr_text_decode(value, bytes.data() + used, bytes.size() - used, &len, nullptr) != MBR_OK)
            die("mbr_text_decode");
        std::string_view out(bytes.data() + used, len);
        used += len + 1;
        return out;
    }
};

// ---- membrane --------------------------------------------------------------------------

const char *const DTYPE_NAMES[] = {"float16", "bfloat16", "float32", "float64", "int8", "int16",
                                   "int32",   "int64",    "uint8",   "fp8_e4m3", "fp8_e5m2", "nf4"};

void from_view(const mbr_identity_view &v, Identity &out, Arena &arena) {
    out.payload_hash = arena.text(v.payload_hash);
    out.model_id = arena.text(v.model_id);
    out.model_revision = arena.text(v.model_revision);
    out.tokenizer_name = arena.text(v.tokenizer_name);
    out.tokenizer_revision = arena.text(v.tokenizer_revision);
    out.layer_range[0] = v.layer_range.start, out.layer_range[1] = v.layer_range.end;
    out.head_range[0] = v.head_range.start, out.head_range[1] = v.head_range.end;
    out.token_span[0] = v.token_span.start, out.token_span[1] = v.token_span.end;
    out.dtype = v.dtype < std::size(DTYPE_NAMES) ? DTYPE_NAMES[v.dtype] : "?";
    out.shape_len = v.shape_len;
    std::memcpy(out.shape, v.shape, sizeof out.shape);
}

bool membrane_envelope(std::string_view doc, Envelope &out, Arena &arena) {
    mbr_envelope_view v;
    if (mbr_envelope_parse_view_decoded(reinterpret_cast<const uint8_t *>(doc.data()), doc.size(), arena.values.data(),
                                        arena.values.size(), &v, nullptr) != MBR_OK)
        return false;
    out.schema_version = 5;
    out.tenant_id = arena.text(v.tenant_id);
    out.has_payload_ref = v.has_payload_ref;
    out.payload_ref = v.has_payload_ref ? arena.text(v.payload_ref) : std::string_view();
    out.payload_size = v.payload_size, out.ttl = v.ttl, out.reuse_score = v.reuse_score;
    out.version_id = v.version_id, out.hlc = v.hlc;
    out.consistency = mbr_consistency_name(v.consistency);
    // The digest is kept as bytes: the text form is only made for the comparison.
    out.fingerprint_compat = std::string_view(reinterpret_cast<const char *>(v.fingerprint_compat),
                                              v.has_fingerprint_compat ? 32 : 0);
    from_view(v.identity, out.identity, arena);
    return true;
}

bool membrane_identity(std::string_view doc, Identity &out, Arena &arena) {
    mbr_identity_view v;
    if (mbr_identity_parse_view_decoded(reinterpret_cast<const uint8_t *>(doc.data()), doc.size(), arena.values.data(),
                                        arena.values.size(), &v, nullptr) != MBR_OK)
        return false;
    from_view(v, out, arena);
    return true;
}

// ---- simdjson DOM ----------------------------------------------------------------------

bool dom_range(element value, int64_t out[2]) {
    simdjson::dom::array array;
    if (value.get_array().get(array)) return false;
    size_t i = 0;
    for (element item : array) {
        if (i == 2 || item.get_int64().get(out[i])) return false;
        i++;
    }
    return i == 2;
}

bool dom_identity(element value, Identity &out) {
    simdjson::dom::object object;
    if (value.get_object().get(object)) return false;
    for (auto field : object) {
        std::string_view key = field.key;
        element v = field.value;
        bool bad = false;
        if (key == "payload_hash") bad = v.get_string().get(out.payload_hash);
        else if (key == "model_id") bad = v.get_string().get(out.model_id);
        else if (key == "model_revision") bad = v.get_string().get(out.model_revision);
        else if (key == "tokenizer_name") bad = v.get_string().get(out.tokenizer_name);
        else if (key == "tokenizer_revision") bad = v.get_string().get(out.tokenizer_revision);
        else if (key == "layer_range") bad = !dom_range(v, out.layer_range);
        else if (key == "head_range") bad = !dom_range(v, out.head_range);
        else if (key == "token_span") bad = !dom_range(v, out.token_span);
        else if (key == "dtype") bad = v.get_string().get(out.dtype);
        else if (key == "shape") {
            simdjson::dom::array array;
            if (v.get_array().get(array)) return false;
            out.shape_len = 0;
            for (element dim : array) {
                if (out.shape_len == 16 || dim.get_int64().get(out.shape[out.shape_len])) return false;
                out.shape_len++;
            }
        }
        if (bad) return false;
    }
    return true;
}

bool dom_envelope(simdjson::dom::parser &parser, const simdjson::padded_string &doc, Envelope &out) {
    element root;
    simdjson::dom::object object;
    if (parser.parse(doc).get(root) || root.get_object().get(object)) return false;
    for (auto field : object) {
        std::string_view key = field.key;
        element v = field.value;
        bool bad = false;
        if (key == "schema_version") bad = v.get_uint64().get(out.schema_version);
        else if (key == "tenant_id") bad = v.get_string().get(out.tenant_id);
        else if (key == "identity") bad = !dom_identity(v, out.identity);
        else if (key == "payload_ref") {
            out.has_payload_ref = !v.is_null();
            if (out.has_payload_ref) bad = v.get_string().get(out.payload_ref);
        } else if (key == "payload_size") bad = v.get_uint64().get(out.payload_size);
        else if (key == "ttl") bad = v.get_double().get(out.ttl);
        else if (key == "reuse_score") bad = v.get_double().get(out.reuse_score);
        else if (key == "version_id") bad = v.get_uint64().get(out.version_id);
        else if (key == "consistency") bad = v.get_string().get(out.consistency);
        else if (key == "hlc") bad = v.get_uint64().get(out.hlc);
        else if (key == "fingerprint_compat") bad = v.get_string().get(out.fingerprint_compat);
        if (bad) return false;
    }
    return true;
}

// ---- simdjson On-Demand ----------------------------------------------------------------

using simdjson::ondemand::value;

bool od_range(value v, int64_t out[2]) {
    simdjson::ondemand::array array;
    if (v.get_array().get(array)) return false;
    size_t i = 0;
    for (auto item : array) {
        if (i == 2 || item.get_int64().get(out[i])) return false;
        i++;
    }
    return i == 2;
}

bool od_identity(value v, Identity &out) {
    simdjson::ondemand::object object;
    if (v.get_object().get(object)) return false;
    for (auto field : object) {
        std::string_view key;
        value item;
        if (field.unescaped_key().get(key) || field.value().get(item)) return false;
        bool bad = false;
        if (key == "payload_hash") bad = item.get_string().get(out.payload_hash);
        else if (key == "model_id") bad = item.get_string().get(out.model_id);
        else if (key == "model_revision") bad = item.get_string().get(out.model_revision);
        else if (key == "tokenizer_name") bad = item.get_string().get(out.tokenizer_name);
        else if (key == "tokenizer_revision") bad = item.get_string().get(out.tokenizer_revision);
        else if (key == "layer_range") bad = !od_range(item, out.layer_range);
        else if (key == "head_range") bad = !od_range(item, out.head_range);
        else if (key == "token_span") bad = !od_range(item, out.token_span);
        else if (key == "dtype") bad = item.get_string().get(out.dtype);
        else if (key == "shape") {
            simdjson::ondemand::array array;
            if (item.get_array().get(array)) return false;
            out.shape_len = 0;
            for (auto dim : array) {
                if (out.shape_len == 16 || dim.get_int64().get(out.shape[out.shape_len])) return false;
                out.shape_len++;
            }
        }
        if (bad) return false;
    }
    return true;
}

bool od_envelope(simdjson::ondemand::parser &parser, const simdjson::padded_string &doc, Envelope &out) {
    simdjson::ondemand::document document;
    simdjson::ondemand::object object;
    if (parser.iterate(doc).get(document) || document.get_object().get(object)) return false;
    for (auto field : object) {
        std::string_view key;
        value v;
        if (field.unescaped_key().get(key) || field.value().get(v)) return false;
        bool bad = false;
        if (key == "schema_version") bad = v.get_uint64().get(out.schema_version);
        else if (key == "tenant_id") bad = v.get_string().get(out.tenant_id);
        else if (key == "identity") bad = !od_identity(v, out.identity);
        else if (key == "payload_ref") {
            bool null = false;
            if (v.is_null().get(null)) return false;
            out.has_payload_ref = !null;
            if (out.has_payload_ref) bad = v.get_string().get(out.payload_ref);
        } else if (key == "payload_size") bad = v.get_uint64().get(out.payload_size);
        else if (key == "ttl") bad = v.get_double().get(out.ttl);
        else if (key == "reuse_score") bad = v.get_double().get(out.reuse_score);
        else if (key == "version_id") bad = v.get_uint64().get(out.version_id);
        else if (key == "consistency") bad = v.get_string().get(out.consistency);
        else if (key == "hlc") bad = v.get_uint64().get(out.hlc);
        else if (key == "fingerprint_compat") bad = v.get_string().get(out.fingerprint_compat);
        if (bad) return false;
    }
    return true;
}

bool od_identity_doc(simdjson::ondemand::parser &parser, const simdjson::padded_string &doc, Identity &out) {
    simdjson::ondemand::document document;
    value root;
    if (parser.iterate(doc).get(document) || document.get_value().get(root)) return false;
    return od_identity(root, out);
}

bool dom_identity_doc(simdjson::dom::parser &parser, const simdjson::padded_string &doc, Identity &out) {
    element root;
    if (parser.parse(doc).get(root)) return false;
    return dom_identity(root, out);
}

// ---- comparing what the sides read -----------------------------------------------------

bool same_identity(const Identity &a, const Identity &b) {
    return a.payload_hash == b.payload_hash && a.model_id == b.model_id && a.model_revision == b.model_revision &&
           a.tokenizer_name == b.tokenizer_name && a.tokenizer_revision == b.tokenizer_revision &&
           a.dtype == b.dtype && std::memcmp(a.layer_range, b.layer_range, sizeof a.layer_range) == 0 &&
           std::memcmp(a.head_range, b.head_range, sizeof a.head_range) == 0 &&
           std::memcmp(a.token_span, b.token_span, sizeof a.token_span) == 0 && a.shape_len == b.shape_len &&
           std::memcmp(a.shape, b.shape, a.shape_len * sizeof a.shape[0]) == 0;
}

std::string hex_of(std::string_view bytes) {
    std::string out;
    for (unsigned char c : bytes) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", c);
        out += two;
    }
    return out;
}

bool same_envelope(const Envelope &mine, const Envelope &theirs) {
    return mine.schema_version == theirs.schema_version && mine.tenant_id == theirs.tenant_id &&
           mine.has_payload_ref == theirs.has_payload_ref && mine.payload_ref == theirs.payload_ref &&
           mine.payload_size == theirs.payload_size && std::memcmp(&mine.ttl, &theirs.ttl, sizeof mine.ttl) == 0 &&
           mine.reuse_score == theirs.reuse_score && mine.version_id == theirs.version_id && mine.hlc == theirs.hlc &&
           mine.consistency == theirs.consistency && hex_of(mine.fingerprint_compat) == theirs.fingerprint_compat &&
           same_identity(mine.identity, theirs.identity);
}

// ---- a whole snapshot: every value visited --------------------------------------------

// What a walk sees: the count and total length of strings, the sum of integers.
struct Walk {
    uint64_t strings = 0, bytes = 0, numbers = 0;
};

// The maps' entry positions are recorded by the parse into `index` (kept from one call
// to the next, as simdjson's parsers keep their buffers), so the map cursors read them
// instead of walking the text again; it grows to what the first call says it needs.
bool membrane_snapshot(std::string_view doc, Walk &walk, std::vector<uint32_t> &index) {
    mbr_snapshot snapshot;
    const auto *bytes = reinterpret_cast<const uint8_t *>(doc.data());
    mbr_error error;
    uint32_t status = mbr_snapshot_parse_indexed(bytes, doc.size(), index.data(), index.size(), &snapshot, &error);
    if (status == MBR_BUFFER_TOO_SMALL) {
        index.resize(error.needed);
        status = mbr_snapshot_parse_indexed(bytes, doc.size(), index.data(), index.size(), &snapshot, &error);
    }
    if (status != MBR_OK) return false;
    mbr_snapshot_info info;
    if (mbr_snapshot_info_get(&snapshot, &info) != MBR_OK) return false;
    walk.numbers += info.cluster_epoch + info.request_count + info.error_count + info.schema_version;
    walk.numbers += static_cast<uint64_t>(info.captured_at);
    mbr_snapshot_cursor cursor;
    bool more = false;
    mbr_text text;
    auto add = [&](uint32_t field, size_t sub) {
        if (mbr_snapshot_cursor_text(&cursor, field, sub, &text) != MBR_OK) return false;
        walk.strings++, walk.bytes += text.len;
        return true;
    };
    if (mbr_snapshot_cursor_init(&snapshot, MBR_SNAPSHOT_MEMBERSHIP, &cursor) != MBR_OK) return false;
    while (mbr_snapshot_cursor_next(&cursor, &more) == MBR_OK && more) {
        mbr_member member;
        if (mbr_snapshot_cursor_member(&cursor, &member) != MBR_OK || !add(MBR_SNAPSHOT_MEMBER_NODE_ID, 0) ||
            !add(MBR_SNAPSHOT_MEMBER_HOST, 0))
            return false;
        walk.numbers += member.port + member.cluster_epoch + member.missed_heartbeats + member.healthy + member.suspect;
    }
    // The maps in batches: one call reads many entries.
    constexpr size_t batch = 256;
    mbr_text keys[batch], nodes[4 * batch];
    size_t node_ends[batch], count = 0;
    auto add_texts = [&](const mbr_text *texts, size_t n) {
        for (size_t i = 0; i < n; i++) walk.strings++, walk.bytes += texts[i].len;
    };
    if (mbr_snapshot_cursor_init(&snapshot, MBR_SNAPSHOT_PRIMARY_MAP, &cursor) != MBR_OK) return false;
    do {
        if (mbr_snapshot_cursor_read_primary(&cursor, keys, nodes, batch, &count) != MBR_OK) return false;
        add_texts(keys, count), add_texts(nodes, count);
    } while (count > 0);
    if (mbr_snapshot_cursor_init(&snapshot, MBR_SNAPSHOT_REPLICA_MAP, &cursor) != MBR_OK) return false;
    do {
        if (mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, batch, nodes, 4 * batch, &count, nullptr) !=
            MBR_OK)
            return false;
        add_texts(keys, count), add_texts(nodes, count > 0 ? node_ends[count - 1] : 0);
    } while (count > 0);
    return true;
}

void dom_walk(element value, Walk &walk) {
    switch (value.type()) {
    case simdjson::dom::element_type::OBJECT:
        for (auto field : simdjson::dom::object(value)) {
            walk.strings++, walk.bytes += field.key.size();
            dom_walk(field.value, walk);
        }
        break;
    case simdjson::dom::element_type::ARRAY:
        for (element item : simdjson::dom::array(value)) dom_walk(item, walk);
        break;
    case simdjson::dom::element_type::STRING:
        walk.strings++, walk.bytes += std::string_view(value).size();
        break;
    case simdjson::dom::element_type::INT64: walk.numbers += static_cast<uint64_t>(int64_t(value)); break;
    case simdjson::dom::element_type::UINT64: walk.numbers += uint64_t(value); break;
    case simdjson::dom::element_type::DOUBLE: walk.numbers += static_cast<uint64_t>(double(value)); break;
    case simdjson::dom::element_type::BOOL: walk.numbers += bool(value); break;
    case simdjson::dom::element_type::NULL_VALUE: break;
    }
}

bool od_walk(value v, Walk &walk) {
    simdjson::ondemand::json_type type;
    if (v.type().get(type)) return false;
    switch (type) {
    case simdjson::ondemand::json_type::object: {
        simdjson::ondemand::object object;
        if (v.get_object().get(object)) return false;
        for (auto field : object) {
            std::string_view key;
            value item;
            if (field.unescaped_key().get(key) || field.value().get(item)) return false;
            walk.strings++, walk.bytes += key.size();
            if (!od_walk(item, walk)) return false;
        }
        return true;
    }
    case simdjson::ondemand::json_type::array: {
        simdjson::ondemand::array array;
        if (v.get_array().get(array)) return false;
        for (auto item : array) {
            value element;
            if (item.get(element) || !od_walk(element, walk)) return false;
        }
        return true;
    }
    case simdjson::ondemand::json_type::string: {
        std::string_view text;
        if (v.get_string().get(text)) return false;
        walk.strings++, walk.bytes += text.size();
        return true;
    }
    case simdjson::ondemand::json_type::number: {
        double number;
        if (v.get_double().get(number)) return false;
        walk.numbers += static_cast<uint64_t>(number);
        return true;
    }
    case simdjson::ondemand::json_type::boolean: {
        bool flag;
        if (v.get_bool().get(flag)) return false;
        walk.numbers += flag;
        return true;
    }
    default: return true;
    }
}

// ---- inputs ----------------------------------------------------------------------------

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) die("cannot read " + path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> read_docs(const std::string &path) {
    std::string all = read_file(path);
    std::vector<std::string> docs;
    size_t at = 0;
    while (at + 4 <= all.size()) {
        uint32_t len = 0;
        std::memcpy(&len, all.data() + at, 4);
        at += 4;
        if (at + len > all.size()) die(path + ": truncated");
        docs.emplace_back(all.substr(at, len));
        at += len;
    }
    if (docs.empty()) die(path + ": no documents");
    return docs;
}

// ---- timing ----------------------------------------------------------------------------

volatile uint64_t sink;

struct Sides {
    std::function<uint64_t()> membrane, on_demand, dom;
};

struct Times {
    double membrane, on_demand, dom, vs_on_demand, vs_dom;
};

Times time_sides(const Sides &sides, int rounds, int repeat) {
    std::vector<double> m, o, d, ro, rd;
    auto run = [&](const std::function<uint64_t()> &side) {
        double start = thread_ns();
        uint64_t acc = 0;
        for (int i = 0; i < repeat; i++) acc += side();
        sink = sink + acc;
        return (thread_ns() - start) / repeat;
    };
    for (int r = 0; r < rounds; r++) {
        double tm = 0, to = 0, td = 0;
        switch (r % 3) {
        case 0: tm = run(sides.membrane), to = run(sides.on_demand), td = run(sides.dom); break;
        case 1: to = run(sides.on_demand), td = run(sides.dom), tm = run(sides.membrane); break;
        default: td = run(sides.dom), tm = run(sides.membrane), to = run(sides.on_demand); break;
        }
        m.push_back(tm), o.push_back(to), d.push_back(td), ro.push_back(tm / to), rd.push_back(tm / td);
    }
    return {median(m), median(o), median(d), median(ro), median(rd)};
}

/// What every side read of a document, folded into the sum the timed loops keep, so
/// that no extraction is optimised away.
uint64_t kept(const Identity &id) { return id.shape_len + id.model_id.size(); }
uint64_t kept(const Envelope &e) { return kept(e.identity) + e.tenant_id.size(); }

/// Every document read by the three sides and compared (any difference ends the run),
/// then the three timed over the whole set; the times are per document. `mine` reads
/// the text, `on_demand` and `dom` its padded copy.
template <class T, class Mine, class OnDemand, class Dom, class Same>
Times compare_and_time(const std::string &name, const std::vector<std::string> &docs, Mine mine, OnDemand on_demand,
                       Dom dom, Same same, int rounds, int repeat) {
    std::vector<simdjson::padded_string> padded;
    for (auto &doc : docs) padded.emplace_back(doc);
    for (size_t i = 0; i < docs.size(); i++) {
        T m, o, d;
        if (!mine(docs[i], m)) die(name + ": membrane refused document " + std::to_string(i));
        if (!on_demand(padded[i], o) || !same(m, o)) die(name + ": On-Demand read another value, document " + std::to_string(i));
        if (!dom(padded[i], d) || !same(m, d)) die(name + ": DOM read another value, document " + std::to_string(i));
    }
    auto over_all = [](const auto &inputs, auto read) {
        return [&inputs, read]() mutable {
            uint64_t acc = 0;
            T value;
            for (const auto &doc : inputs) acc += read(doc, value) + kept(value);
            return acc;
        };
    };
    Times t = time_sides({over_all(docs, mine), over_all(padded, on_demand), over_all(padded, dom)}, rounds, repeat);
    const double n = static_cast<double>(docs.size());
    t.membrane /= n, t.on_demand /= n, t.dom /= n;
    return t;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 2) die("usage: bench_simdjson INPUT_DIR [ROUNDS]");
    const std::string dir = argv[1];
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 21;
    std::printf("bench_simdjson: simdjson %s, kernel %s; membrane-frame %s; %d rounds, thread CPU time\n",
                SIMDJSON_VERSION, simdjson::get_active_implementation()->name().c_str(), mbr_version(), rounds);
    std::printf("bench_simdjson: %-28s %10s %10s %10s %9s %9s\n", "input (per document)", "membrane", "On-Demand",
                "DOM", "m/OD", "m/DOM");

    simdjson::ondemand::parser od_parser;
    simdjson::dom::parser dom_parser;
    Arena arena;

    auto mine_envelope = [&](std::string_view doc, Envelope &out) {
        arena.reset();
        return membrane_envelope(doc, out, arena);
    };
    auto od_envelope_of = [&](const simdjson::padded_string &doc, Envelope &out) {
        return od_envelope(od_parser, doc, out);
    };
    auto dom_envelope_of = [&](const simdjson::padded_string &doc, Envelope &out) {
        return dom_envelope(dom_parser, doc, out);
    };
    for (const char *spelling : {"stored", "compact", "reversed", "pretty"}) {
        Times t = compare_and_time<Envelope>(std::string("envelope ") + spelling,
                                             read_docs(dir + "/envelopes-" + spelling + ".bin"), mine_envelope,
                                             od_envelope_of, dom_envelope_of, same_envelope, rounds, 200);
        std::printf("bench_simdjson: envelope %-19s %7.0f ns %7.0f ns %7.0f ns %8.2fx %8.2fx\n", spelling,
                    t.membrane, t.on_demand, t.dom, t.vs_on_demand, t.vs_dom);
    }

    {
        auto docs = read_docs(dir + "/identities.bin");
        Times t = compare_and_time<Identity>(
            "identities", docs,
            [&](std::string_view doc, Identity &out) {
                arena.reset();
                return membrane_identity(doc, out, arena);
            },
            [&](const simdjson::padded_string &doc, Identity &out) { return od_identity_doc(od_parser, doc, out); },
            [&](const simdjson::padded_string &doc, Identity &out) { return dom_identity_doc(dom_parser, doc, out); },
            same_identity, rounds, 50);
        std::printf("bench_simdjson: identity (canonical, %zu)    %7.0f ns %7.0f ns %7.0f ns %8.2fx %8.2fx\n",
                    docs.size(), t.membrane, t.on_demand, t.dom, t.vs_on_demand, t.vs_dom);
    }

    {
        const std::string doc = read_file(dir + "/snapshot.json");
        const simdjson::padded_string padded(doc);
        Walk mine, od, dom;
        std::vector<uint32_t> index;
        if (!membrane_snapshot(doc, mine, index)) die("snapshot: membrane refused it");
        simdjson::ondemand::document document;
        value root;
        if (od_parser.allocate(padded.size()) || od_parser.iterate(padded).get(document) ||
            document.get_value().get(root) || !od_walk(root, od))
            die("snapshot: On-Demand could not walk it");
        element dom_root;
        if (dom_parser.parse(padded).get(dom_root)) die("snapshot: DOM could not parse it");
        dom_walk(dom_root, dom);
        // Every side saw the same strings: keys and values (membrane's keys are the maps'
        // content hashes, the fixed field names are not strings it hands out).
        if (mine.bytes == 0 || od.strings != dom.strings || od.bytes != dom.bytes)
            die("snapshot: the walks disagree");
        Sides sides{[&] {
                        Walk w;
                        return membrane_snapshot(doc, w, index) + w.bytes;
                    },
                    [&] {
                        Walk w;
                        simdjson::ondemand::document d;
                        value r;
                        if (od_parser.iterate(padded).get(d) || d.get_value().get(r) || !od_walk(r, w)) return uint64_t(0);
                        return w.bytes;
                    },
                    [&] {
                        Walk w;
                        element r;
                        if (dom_parser.parse(padded).get(r)) return uint64_t(0);
                        dom_walk(r, w);
                        return w.bytes;
                    }};
        Times t = time_sides(sides, rounds, 3);
        std::vector<double> parse_only;
        for (int r = 0; r < rounds; r++) {
            double start = thread_ns();
            element r_root;
            if (dom_parser.parse(padded).get(r_root)) die("snapshot: DOM");
            parse_only.push_back(thread_ns() - start);
        }
        double mib = static_cast<double>(doc.size()) / (1 << 20);
        auto gbs = [&](double ns) { return static_cast<double>(doc.size()) / ns; };
        std::printf("bench_simdjson: snapshot %.1f MiB, full walk  %6.2f GB/s %6.2f GB/s %6.2f GB/s %8.2fx %8.2fx\n",
                    mib, gbs(t.membrane), gbs(t.on_demand), gbs(t.dom), t.vs_on_demand, t.vs_dom);
        std::printf("bench_simdjson: snapshot, DOM parse alone (no walk): %.2f GB/s\n", gbs(median(parse_only)));
    }
    return 0;
}
