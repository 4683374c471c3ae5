// kv_engine: an inference engine exporting a KV-cache block as a Membrane v5 frame and
// importing it back (C++17, through membrane_frame.hpp).
//
// Export streams the block layer by layer through a chunked writer into a transport
// (here an in-memory "socket"), with no staging copy of the tensor. Import verifies the
// frame at the full level in place, checks that the identity matches what this engine
// serves (model, tokenizer, dtype, layout), and copies the payload into a fresh block.
// It then shows what a receiver sees for a damaged frame, a frame from another model,
// and two frames sent back to back (prefix mode); announces the block with a v5 JSON
// envelope whose compatibility hash a peer checks against its own model; and migrates
// a v4 copy of the frame and a schema 2 envelope to v5.
//
//   usage: kv_engine            exit: 0 when every step behaved as expected
#include "membrane_frame.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
    std::printf("kv_engine: %-58s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) failures++;
}

/// A block of KV cache: [2 (K, V), layers, heads, tokens, head_dim] float16 values.
struct KvBlock {
    std::string model;
    std::int64_t first_layer = 0, layers = 0, heads = 0, first_token = 0, tokens = 0, head_dim = 0;
    std::vector<std::uint16_t> values; // float16 bits

    std::int64_t layer_stride() const { return heads * tokens * head_dim; }
    std::size_t bytes() const { return values.size() * sizeof(std::uint16_t); }
    std::array<std::int64_t, 5> shape() const { return {2, layers, heads, tokens, head_dim}; }
    /// The K or V slab of one layer: contiguous, exported as one chunk.
    membrane::Bytes layer_slab(int kv, std::int64_t layer) const {
        std::size_t offset = static_cast<std::size_t>((kv * layers + layer) * layer_stride());
        return membrane::Bytes(values.data() + offset, static_cast<std::size_t>(layer_stride()) * sizeof(std::uint16_t));
    }
};

/// The engine: which model it serves, and its cache.
class Engine {
  public:
    explicit Engine(std::string model) : model_(std::move(model)) {}

    KvBlock compute_block(std::int64_t first_layer, std::int64_t layers, std::int64_t first_token,
                          std::int64_t tokens) const {
        KvBlock b{model_, first_layer, layers, 8, first_token, tokens, 64, {}};
        b.values.resize(static_cast<std::size_t>(2 * layers * b.layer_stride()));
        for (std::size_t i = 0; i < b.values.size(); i++)
            b.values[i] = static_cast<std::uint16_t>(0x3c00u ^ ((i + static_cast<std::size_t>(first_token)) * 40503u));
        return b;
    }

    /// Export: the identity of the block (its payload_hash computed by the owned
    /// identity), then head, per-layer slabs and trailer streamed into `transport`
    /// through the chunked writer.
    membrane::Status export_block(const KvBlock &block, std::vector<std::uint8_t> &transport) const {
        std::array<std::int64_t, 5> shape = block.shape();
        membrane::IdentityValues values;
        values.model_id = block.model;
        values.model_revision = "2024-05";
        values.tokenizer_name = block.model;
        values.tokenizer_revision = "";
        values.layer_range = {block.first_layer, block.first_layer + block.layers - 1};
        values.head_range = {-1, -1};
        values.token_span = {block.first_token, block.first_token + block.tokens - 1};
        values.dtype = membrane::Dtype::float16;
        values.shape = shape;
        // The payload is the K slabs then the V slabs; they are contiguous in `values`,
        // so one SHA-256 pass over the buffer gives the payload_hash.
        membrane::Result<membrane::OwnedIdentity> identity = membrane::OwnedIdentity::for_payload(values, block.values);
        if (!identity) return identity.error();

        auto sink = [&transport](const std::uint8_t *data, std::size_t len) {
            transport.insert(transport.end(), data, data + len);
            return 0;
        };
        membrane::ChunkedWriter writer;
        membrane::Status begun = writer.begin(identity->identity(), block.bytes(), sink);
        if (!begun) return begun;
        for (int kv = 0; kv < 2; kv++) {
            for (std::int64_t layer = 0; layer < block.layers; layer++) {
                membrane::Status wrote = writer.write(block.layer_slab(kv, layer));
                if (!wrote) return wrote;
            }
        }
        membrane::Result<mbr_chunked_outcome> outcome = writer.finish();
        if (!outcome) return outcome.error();
        if (!outcome->payload_hash_matches) return membrane::Error(membrane::Code::payload_hash_mismatch);
        return membrane::Status();
    }

    /// Import: verify in place at the full level, refuse what this engine does not
    /// serve, and copy the payload into a new block.
    membrane::Result<KvBlock> import_block(membrane::Bytes frame_bytes,
                                           membrane::Mode mode = membrane::Mode::exact,
                                           membrane::Bytes *rest = nullptr) const {
        auto frame = membrane::FrameView::parse(frame_bytes, membrane::ReadOptions().level(membrane::Level::full).mode(mode));
        if (!frame) return frame.error();
        if (rest != nullptr) *rest = frame->rest();
        membrane::Identity id = *frame->identity();
        const membrane::Error refused(membrane::Code::invalid_argument);
        if (id.view(membrane::Field::model_id).value_or("") != model_ ||
            id.view(membrane::Field::tokenizer_name).value_or("") != model_)
            return refused; // another model's cache
        membrane::Result<membrane::Dtype> dtype = id.dtype();
        if (!dtype || *dtype != membrane::Dtype::float16) return refused;
        membrane::Result<membrane::Shape> shape = id.shape();
        if (!shape || shape->size() != 5 || (*shape)[0] != 2) return refused;
        if (id.tensor_bytes().value_or(0) != frame->payload().size()) return refused;
        mbr_range layers = id.range(membrane::Field::layer_range).value();
        mbr_range tokens = id.range(membrane::Field::token_span).value();

        KvBlock b{model_, layers.start, (*shape)[1], (*shape)[2], tokens.start, (*shape)[3], (*shape)[4], {}};
        b.values.resize(frame->payload().size() / sizeof(std::uint16_t));
        std::memcpy(b.values.data(), frame->payload().data(), frame->payload().size());
        return b;
    }

  private:
    std::string model_;
};

bool same(const KvBlock &a, const KvBlock &b) {
    return a.model == b.model && a.first_layer == b.first_layer && a.layers == b.layers && a.heads == b.heads &&
           a.first_token == b.first_token && a.tokens == b.tokens && a.head_dim == b.head_dim && a.values == b.values;
}

} // namespace

int main() {
    expect(membrane::abi_matches(), "library ABI matches the header");
    Engine engine("llama-3-8b");
    KvBlock block = engine.compute_block(8, 4, 128, 32);

    // Export through the chunked writer; nothing but the transport holds the frame.
    std::vector<std::uint8_t> wire;
    membrane::Status exported = engine.export_block(block, wire);
    expect(exported.ok(), "export a 4-layer block through the chunked writer");
    if (!exported) std::printf("  %s\n", exported.error().message().c_str());
    expect(membrane::check(wire, membrane::Level::full).ok(), "the exported frame passes mbr_frame_check (full)");

    // The one-shot encoder writes the same bytes.
    {
        auto parsed = membrane::FrameView::parse(wire);
        bool same_bytes = false;
        if (parsed) {
            auto again = membrane::encode(*parsed->identity(), parsed->payload());
            same_bytes = again.ok() && *again == wire;
        }
        expect(same_bytes, "mbr_frame_encode writes the same frame");
    }

    // Import it back.
    membrane::Result<KvBlock> imported = engine.import_block(wire);
    expect(imported.ok() && same(block, *imported), "import restores the identical block");

    // Fingerprint: the receiver can key its cache by it.
    auto frame = membrane::FrameView::parse(wire);
    auto fingerprint = frame ? frame->identity()->fingerprint() : membrane::Result<membrane::Digest>(frame.error());
    auto from_json = frame ? membrane::fingerprint_hex(frame->identity_json())
                           : membrane::Result<std::array<char, 65>>(frame.error());
    expect(fingerprint.ok() && from_json.ok() && fingerprint->hex() == std::string_view(from_json->data(), 64),
           "fingerprint of the view equals fingerprint of the JSON");
    if (fingerprint) std::printf("  fingerprint %s\n", std::string(fingerprint->hex()).c_str());

    // A damaged payload byte: corrupt class, trailer_mismatch, with the offset.
    {
        std::vector<std::uint8_t> damaged = wire;
        damaged[damaged.size() - 100] ^= 0x01;
        auto r = engine.import_block(damaged);
        expect(!r && r.code() == membrane::Code::trailer_mismatch && r.error().is_corrupt() && r.error().offset(),
               "a flipped payload bit is trailer_mismatch (corrupt)");
        if (!r) std::printf("  %s\n", r.error().message().c_str());
    }

    // Another model's block: a valid frame this engine refuses.
    {
        Engine other("mistral-7b");
        std::vector<std::uint8_t> foreign;
        expect(other.export_block(other.compute_block(0, 2, 0, 16), foreign).ok(), "another engine exports its block");
        auto r = engine.import_block(foreign);
        expect(!r && r.code() == membrane::Code::invalid_argument, "a block of another model is refused");
    }

    // Two blocks back to back on one stream: prefix mode hands back the rest.
    {
        KvBlock second = engine.compute_block(12, 4, 128, 32);
        std::vector<std::uint8_t> stream = wire;
        expect(engine.export_block(second, stream).ok(), "export a second block onto the same stream");
        membrane::Bytes rest;
        auto first = engine.import_block(stream, membrane::Mode::prefix, &rest);
        auto next = first ? engine.import_block(rest, membrane::Mode::prefix, &rest) : first;
        expect(first.ok() && next.ok() && rest.empty() && same(*first, block) && same(*next, second),
               "prefix mode reads two concatenated blocks");
        auto exact = membrane::FrameView::parse(stream);
        expect(!exact && exact.code() == membrane::Code::trailing_bytes, "exact mode refuses the concatenation");
    }

    // Streaming receive in 1000-byte pieces, identity kept in a caller buffer.
    {
        std::vector<std::uint8_t> identity_buf(MBR_DEFAULT_IDENTITY_LIMIT);
        membrane::StreamVerifier verifier(membrane::ReadOptions().level(membrane::Level::full), identity_buf);
        bool fed = verifier.status().ok();
        membrane::Bytes all(wire);
        for (std::size_t at = 0; fed && at < all.size(); at += 1000)
            fed = verifier.feed(all.subspan(at).first(std::min<std::size_t>(1000, all.size() - at))).ok();
        auto verdict = verifier.finish();
        expect(fed && verdict.ok() && verdict->payload_len() == block.bytes() &&
                   verdict->identity()->fingerprint()->hex() == fingerprint->hex(),
               "streamed verification agrees with the in-place view");
    }

    // Announce the block with a v5 envelope; a peer checks the model-compatibility hash
    // against its own model before fetching the frame.
    if (frame) {
        membrane::hlc::Clock clock;
        auto stamp = clock.tick(1735600000000ull);
        std::string payload_ref = membrane::sha256(frame->payload()).hex_string();
        membrane::Identity identity = *frame->identity();
        membrane::EnvelopeValues values;
        values.tenant_id = "acme";
        values.identity = &identity;
        values.payload_ref = payload_ref;
        values.payload_size = frame->payload().size();
        values.ttl = 60.0;
        values.reuse_score = 0.87;
        values.version_id = 3;
        values.consistency = membrane::Consistency::quorum;
        values.hlc = stamp.value_or(0);
        values.derive_fingerprint_compat = true;
        auto envelope = membrane::Envelope::build(values);
        auto text = envelope ? envelope->to_string() : membrane::Result<std::string>(envelope.error());
        expect(stamp.ok() && text.ok() && membrane::check_envelope(*text).ok(), "announce the block with a v5 envelope");
        if (text) std::printf("  %.100s...\n", text->c_str());

        // The peer: parse, compare the compatibility hash with its own model's.
        auto received = text ? membrane::Envelope::parse(*text) : membrane::Result<membrane::Envelope>(text.error());
        auto fields = received ? received->fields() : membrane::Result<mbr_envelope_fields>(received.error());
        membrane::CompatInputs mine;
        mine.model_id = "llama-3-8b";
        mine.model_revision = "2024-05";
        mine.tokenizer_name = "llama-3-8b";
        mine.dtype = "float16";
        auto my_hash = membrane::compat_hash(mine);
        expect(fields.ok() && my_hash.ok() && std::strcmp(fields->fingerprint_compat_hex, my_hash->data()) == 0 &&
                   fields->consistency == MBR_CONSISTENCY_QUORUM && received->tenant_id().value_or("") == "acme" &&
                   membrane::hlc::unpack(fields->hlc).physical_ms == 1735600000000ull,
               "the peer reads the envelope and matches its compat hash");
        auto canonical = text ? membrane::canonicalize_envelope(*text) : membrane::Result<std::string>(text.error());
        expect(canonical.ok() && *canonical == *text && received->is_canonical().value_or(false),
               "the envelope text is its own canonical form");
        auto later = clock.observe(fields ? fields->hlc : 0, 1735600000000ull);
        expect(later.ok() && later.value() > values.hlc, "the peer's clock moves past the envelope's hlc");
    }

    // Migration: a v4 copy of the frame becomes the v5 frame again; a schema 2 envelope
    // becomes a v5 one with the defaults filled in.
    {
        std::vector<std::uint8_t> legacy = wire;
        legacy[3] = 0x04;
        legacy[4] = 0x04;
        auto plan = membrane::plan_frame_migration(legacy);
        auto done = membrane::migrate_frame_in_place(legacy);
        expect(plan.ok() && plan->kind() == membrane::MigrationKind::legacy && done.ok() && done->from_version() == 4 &&
                   legacy == wire,
               "a v4 frame migrates in place to the v5 bytes");
        const char *v2 =
            "{\"schema_version\": 2, \"identity\": {\"payload_hash\": \"x\", \"model_id\": \"llama-3-8b\", "
            "\"model_revision\": \"2024-05\", \"tokenizer_name\": \"llama-3-8b\", \"tokenizer_revision\": \"\", "
            "\"layer_range\": [0, 1], \"head_range\": [-1, -1], \"token_span\": [0, 7], \"dtype\": \"float16\", "
            "\"shape\": [1]}, \"payload_ref\": null, \"payload_size\": 0, \"ttl\": 60, \"reuse_score\": 0.5, "
            "\"version_id\": 1}";
        auto migrated =
            membrane::migrate_envelope(std::string_view(v2), membrane::EnvelopeMigrationOptions().default_tenant("acme"));
        auto parsed =
            migrated ? membrane::Envelope::parse(*migrated) : membrane::Result<membrane::Envelope>(migrated.error());
        auto parsed_fields = parsed ? parsed->fields() : membrane::Result<mbr_envelope_fields>(parsed.error());
        auto my_hash =
            membrane::compat_hash(membrane::CompatInputs{"llama-3-8b", "2024-05", 0, "llama-3-8b", "", 0, "float16", ""});
        expect(parsed_fields.ok() && parsed->tenant_id().value_or("") == "acme" && my_hash.ok() &&
                   std::strcmp(parsed_fields->fingerprint_compat_hex, my_hash->data()) == 0,
               "a schema 2 envelope migrates to v5 with its compat hash");
        auto again = migrated ? membrane::migrate_envelope(*migrated) : migrated;
        expect(again.ok() && *again == *migrated, "migrating the result again changes nothing");
    }

#ifdef MEMBRANE_FRAME_HPP_EXCEPTIONS
    // Errors as exceptions, when the caller prefers them.
    try {
        std::vector<std::uint8_t> empty;
        (void)membrane::FrameView::parse(empty).value();
        expect(false, "value() on an error throws");
    } catch (const membrane::Exception &e) {
        expect(e.error().code() == membrane::Code::too_short && e.code() == membrane::Code::too_short,
               "value() on an error throws membrane::Exception (a std::system_error)");
    }
#endif

    std::printf("kv_engine: %s\n", failures == 0 ? "all steps behaved as expected" : "FAILURES");
    return failures == 0 ? 0 : 1;
}
