// test_cpp: the C++ wrapper's own contract, beyond what kv_engine and test_aligned use.
//
//  * A success costs nothing but the C call: the program is linked with
//    -Wl,--wrap=mbr_status_name,... (Makefile, CMakeLists.txt), so every call of a status
//    or name function lands in a counter here first. Successful accessors and parses
//    must leave the counters at zero; an error's message() must move them (which shows
//    the wrapping is in effect and the test could fail).
//  * Errors: code, class, offset, identity field, needed(), the std::error_code
//    category, the one-line message, exceptions as std::system_error.
//  * Views: string fields in place, the escaped case (buffer_too_small with the size a
//    decode needs), OwnedIdentity surviving a move of itself and the end of its inputs.
//  * verify_batch: the same verdicts as FrameView::parse, frame by frame.
//  * The engine path: a digest over several buffers (in one call and piece by piece),
//    the frame written to a file descriptor from those buffers, the identity checked
//    against the loaded model's in one call.
//
//   usage: test_cpp            exit: 0 when every check passed
#include "membrane_frame.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

namespace mf = membrane;

extern "C" {
// The real functions, and the wrappers the linker routes every call to.
const char *__real_mbr_status_name(uint32_t status);
const char *__real_mbr_status_str(uint32_t status);
uint32_t __real_mbr_status_class(uint32_t status);
const char *__real_mbr_class_name(uint32_t error_class);
const char *__real_mbr_field_name(uint32_t field);
}

static int status_calls = 0;

extern "C" {
const char *__wrap_mbr_status_name(uint32_t status) { status_calls++; return __real_mbr_status_name(status); }
const char *__wrap_mbr_status_str(uint32_t status) { status_calls++; return __real_mbr_status_str(status); }
uint32_t __wrap_mbr_status_class(uint32_t status) { status_calls++; return __real_mbr_status_class(status); }
const char *__wrap_mbr_class_name(uint32_t error_class) { status_calls++; return __real_mbr_class_name(error_class); }
const char *__wrap_mbr_field_name(uint32_t field) { status_calls++; return __real_mbr_field_name(field); }
}

static int passes = 0;
static int failures = 0;

static void expect(bool ok, const char *what) {
    std::printf("test_cpp: %-78s %s\n", what, ok ? "ok" : "FAILED");
    if (ok)
        passes++;
    else
        failures++;
}

/// An identity's values over `hash`, with a model id that may need JSON escapes.
static mf::IdentityValues values_of(std::string_view hash, std::string_view model, const std::int64_t (&shape)[3]) {
    mf::IdentityValues v;
    v.payload_hash = hash;
    v.model_id = model;
    v.model_revision = "2024-05";
    v.tokenizer_name = "tok";
    v.layer_range = {0, 1};
    v.token_span = {0, 3};
    v.dtype = mf::Dtype::int8;
    v.shape = shape;
    return v;
}

int main() {
    static const std::int64_t shape[3] = {2, 4, 8};
    std::vector<std::uint8_t> payload(64);
    for (std::size_t i = 0; i < payload.size(); i++) payload[i] = static_cast<std::uint8_t>(i * 7);

    // ---- owned identities: the hash computed and kept, the inputs free to go ----
    mf::Result<mf::OwnedIdentity> owned = [&] {
        std::string model = "llama-3-8b";
        auto made = mf::OwnedIdentity::for_payload(values_of("", model, shape), payload);
        model.assign(model.size(), 'X'); // the identity must not see this
        return made;
    }();
    expect(owned.ok(), "OwnedIdentity::for_payload builds over its own copies");
    if (!owned) return 1;
    mf::OwnedIdentity moved = std::move(*owned);
    const mf::Identity &id = moved.identity();
    expect(id.view(mf::Field::model_id).value_or("") == "llama-3-8b", "the owned strings survive their source and a move");
    expect(id.view(mf::Field::payload_hash).value_or("") == mf::sha256(payload).hex_string(),
           "for_payload computed the payload_hash");

    std::vector<std::uint8_t> frame_bytes = mf::encode(id, payload).value();

    // ---- successes make no status or name call ----
    status_calls = 0;
    {
        auto frame = mf::FrameView::parse(frame_bytes, mf::ReadOptions().level(mf::Level::full));
        auto view = frame->identity();
        auto dtype = view->dtype();
        auto layers = view->range(mf::Field::layer_range);
        auto dims = view->shape();
        auto model = view->view(mf::Field::model_id);
        auto checked = mf::check(frame_bytes);
        auto ints = frame->payload_as<std::int8_t>();
        bool all_ok = frame.ok() && dtype.ok() && *dtype == mf::Dtype::int8 && layers.ok() && layers->end == 1 &&
                      dims.ok() && dims->size() == 3 && model.ok() && checked.ok() && ints.ok() &&
                      ints->size() == payload.size();
        expect(all_ok, "parse, check and every accessor succeed");
    }
    expect(status_calls == 0, "successful calls make no status or name call (counted through --wrap)");

    // ---- an error: small, exact, and described when asked ----
    std::vector<std::uint8_t> damaged = frame_bytes;
    damaged[damaged.size() - 9] ^= 0x40; // the last payload byte
    auto bad = mf::FrameView::parse(damaged);
    expect(!bad && bad.code() == mf::Code::trailer_mismatch, "a damaged payload is trailer_mismatch");
    mf::Error error = bad.error();
    expect(error.is_corrupt() && error.error_class() == mf::ErrorClass::corrupt, "its class is corrupt");
    expect(error.offset().has_value() && *error.offset() < damaged.size(), "it carries the byte offset");
    std::string message = error.message();
    expect(message.rfind("trailer_mismatch at byte ", 0) == 0, "message() starts with the name and the offset");
    expect(status_calls > 0, "reading the message calls the name functions (the counter works)");
    std::error_code code = error.error_code();
    expect(code == mf::Code::trailer_mismatch && std::string(code.category().name()) == "membrane" &&
               code.message() == std::string(mf::description(mf::Code::trailer_mismatch)),
           "std::error_code: category membrane, the code's description");
    char small[12];
    std::size_t full = error.format(small, sizeof small);
    expect(full == message.size() && std::strlen(small) == sizeof small - 1, "format() cuts to the buffer, says the length");

    // ---- identity field errors name the field ----
    const char *reversed = "{\"payload_hash\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
                           "\"model_id\":\"m\",\"model_revision\":\"\",\"tokenizer_name\":\"t\","
                           "\"tokenizer_revision\":\"\",\"layer_range\":[3,1],\"head_range\":[-1,-1],"
                           "\"token_span\":[0,0],\"dtype\":\"int8\",\"shape\":[1]}";
    auto field_error = mf::Identity::parse(reversed);
    expect(!field_error && field_error.code() == mf::Code::identity_field &&
               field_error.error().field() == mf::Field::layer_range && field_error.error().offset().has_value(),
           "identity_field names the field (layer_range) and the offset");
    expect(field_error.error().message().find("(layer_range)") != std::string::npos, "and the message says so");

    // ---- a string with escapes has no view in place ----
    auto escaped = mf::OwnedIdentity::build(values_of(mf::sha256(payload).hex_string(), "caf\xc3\xa9", shape));
    std::vector<std::uint8_t> canonical(escaped ? escaped->identity().canonical_len().value_or(0) : 0);
    auto written = escaped ? escaped->identity().write_canonical(canonical) : mf::Result<std::size_t>(escaped.error());
    auto reparsed = mf::Identity::parse(canonical);
    auto in_place = reparsed ? reparsed->view(mf::Field::model_id) : mf::Result<std::string_view>(reparsed.error());
    expect(written.ok() && reparsed.ok() && !in_place && in_place.code() == mf::Code::buffer_too_small &&
               in_place.error().needed() == std::strlen("caf\xc3\xa9") + 1,
           "an escaped value (\\u00e9) is buffer_too_small, needed() the decode size");
    char decoded[16];
    auto n = reparsed ? reparsed->string_into(mf::Field::model_id, decoded, sizeof decoded)
                      : mf::Result<std::size_t>(reparsed.error());
    expect(n.ok() && std::string(decoded, *n) == "caf\xc3\xa9", "string_into() decodes it");
    auto all = mf::Identity::parse_view(canonical);
    auto model = all ? mf::decode(all->model_id) : mf::Result<std::string>(all.error());
    auto hash = all ? mf::plain(all->payload_hash) : std::nullopt;
    expect(all.ok() && all->model_id.has_escapes && !mf::plain(all->model_id) && model.ok() &&
               *model == "caf\xc3\xa9" && hash && *hash == mf::sha256(payload).hex_string(),
           "parse_view() gives every field: plain strings in place, decode() for escapes");
    std::vector<char> values(canonical.size());
    auto decoded_view = mf::Identity::parse_view(canonical, values);
    auto decoded_model = decoded_view ? mf::plain(decoded_view->model_id) : std::nullopt;
    expect(decoded_view.ok() && decoded_model && *decoded_model == "caf\xc3\xa9" &&
               decoded_model->data() == values.data() && decoded_view->payload_hash.ptr == all->payload_hash.ptr,
           "parse_view(json, buf) decodes the escaped strings into buf, the others stay in place");
    char two[2];
    auto no_room = mf::Identity::parse_view(canonical, mf::MutableBytes(two, sizeof two));
    expect(no_room.ok() && no_room->model_id.has_escapes && no_room->model_id.ptr == all->model_id.ptr,
           "a value that does not fit the room keeps its view of the text");
    auto same_view = reparsed ? reparsed->fields_view() : mf::Result<mbr_identity_view>(reparsed.error());
    expect(same_view.ok() && same_view->model_id.ptr == all->model_id.ptr && same_view->shape_len == all->shape_len,
           "fields_view() of the parsed identity points at the same bytes");
    char tiny[3];
    auto short_buf = all ? mf::decode_into(all->model_id, tiny, sizeof tiny) : mf::Result<std::size_t>(all.error());
    expect(!short_buf && short_buf.code() == mf::Code::buffer_too_small && short_buf.error().needed() == 6,
           "decode_into() a short buffer is buffer_too_small with needed()");

    // ---- an envelope's every field in one call ----
    static const char envelope_json[] =
        "{\"schema_version\": 5, \"tenant_id\": \"t\\u00e9\", \"identity\": {\"payload_hash\": \"x\", \"model_id\": \"m\", "
        "\"model_revision\": \"\", \"tokenizer_name\": \"t\", \"tokenizer_revision\": \"\", \"layer_range\": [0, 1], "
        "\"head_range\": [-1, -1], \"token_span\": [0, 7], \"dtype\": \"int8\", \"shape\": [1]}, \"payload_ref\": null, "
        "\"payload_size\": 3, \"ttl\": 60.0, \"reuse_score\": 0.5, \"version_id\": 9, \"consistency\": \"quorum\", "
        "\"hlc\": 7, \"fingerprint_compat\": \"\"}";
    const mf::Bytes envelope_text(reinterpret_cast<const std::uint8_t *>(envelope_json), sizeof envelope_json - 1);
    auto env_view = mf::Envelope::parse_view(envelope_text);
    auto tenant = env_view ? mf::decode(env_view->tenant_id) : mf::Result<std::string>(env_view.error());
    expect(env_view.ok() && tenant.ok() && *tenant == "t\xc3\xa9" && !env_view->has_payload_ref &&
               env_view->payload_size == 3 && env_view->version_id == 9 &&
               env_view->consistency == MBR_CONSISTENCY_QUORUM && env_view->identity.shape_len == 1,
           "Envelope::parse_view() reads every field");
    std::vector<char> env_values(envelope_text.size());
    auto env_decoded = mf::Envelope::parse_view(envelope_text, env_values);
    auto plain_tenant = env_decoded ? mf::plain(env_decoded->tenant_id) : std::nullopt;
    expect(env_decoded.ok() && plain_tenant && *plain_tenant == "t\xc3\xa9" && env_decoded->identity.shape_len == 1,
           "Envelope::parse_view(json, buf) gives the decoded tenant_id in place");
    auto envelope = mf::Envelope::parse(envelope_text);
    auto again = envelope ? envelope->view() : mf::Result<mbr_envelope_view>(envelope.error());
    expect(again.ok() && again->tenant_id.ptr == env_view->tenant_id.ptr && again->hlc == 7,
           "Envelope::view() of the parsed envelope is the same view");
    auto cut = mf::Envelope::parse_view(envelope_text.first(30));
    expect(!cut && cut.code() == mf::Code::envelope_json && cut.error().offset().has_value(),
           "a bad text is refused with its code and offset");

    // ---- verify_batch agrees with parse ----
    std::vector<mf::Bytes> frames = {mf::Bytes(frame_bytes), mf::Bytes(damaged), mf::Bytes(frame_bytes).first(10)};
    auto verdicts = mf::verify_batch(frames);
    bool agree = verdicts.ok() && verdicts->size() == frames.size();
    for (std::size_t i = 0; agree && i < frames.size(); i++) {
        auto one = mf::FrameView::parse(frames[i]);
        agree = (*verdicts)[i].code() == one.code() && (*verdicts)[i].error().offset() == one.error().offset();
    }
    expect(agree, "verify_batch gives each frame parse's code and offset");

    // ---- the engine path: slabs in several buffers, one digest, writev, one compare ----
    std::vector<std::uint8_t> k(payload.begin(), payload.begin() + 24), v(payload.begin() + 24, payload.end());
    mf::Bytes slabs[] = {mf::Bytes(k), mf::Bytes(), mf::Bytes(v)};
    mf::Digest over_slabs = mf::sha256(slabs);
    mf::Sha256 stepwise;
    stepwise.update(k).update(v);
    mf::Digest stepped = stepwise.finish();
    expect(over_slabs == mf::sha256(payload) && stepped == over_slabs && stepwise.finish() == mf::sha256(mf::Bytes()),
           "sha256 over slabs, Sha256 piece by piece and sha256 of the whole agree");
    std::FILE *file = std::tmpfile();
    auto layout = mf::write_frame(file != nullptr ? fileno(file) : -1, id, slabs, mf::WriteOptions(), &over_slabs);
    std::vector<std::uint8_t> back(frame_bytes.size() + 1);
    std::size_t got = 0;
    if (file != nullptr) {
        std::rewind(file);
        got = std::fread(back.data(), 1, back.size(), file);
        std::fclose(file);
    }
    back.resize(got);
    expect(layout.ok() && layout->frame_len == frame_bytes.size() && back == frame_bytes,
           "write_frame(fd, slabs) writes the bytes encode() gives");
    auto refused = mf::write_frame(-1, id, slabs);
    expect(refused.code() == mf::Code::invalid_argument, "write_frame to a negative descriptor is invalid_argument");
    auto loaded = mf::OwnedIdentity::build(values_of(over_slabs.hex(), "llama-3-8b", shape));
    auto other_model = mf::OwnedIdentity::build(values_of(over_slabs.hex(), "mistral-7b", shape));
    auto same = loaded ? id.differences(loaded->identity(), mf::FieldSet::model()) : mf::Result<mf::FieldSet>(loaded.error());
    auto differs = other_model ? id.differences(other_model->identity()) : mf::Result<mf::FieldSet>(other_model.error());
    expect(same.ok() && same->empty() && differs.ok() && *differs == mf::FieldSet(mf::Field::model_id) &&
               differs->first() == mf::Field::model_id,
           "differences() against the loaded model: none; against another: model_id");
    auto bad_set = id.differences(id, mf::FieldSet::from_bits(1u << 20));
    expect(bad_set.code() == mf::Code::invalid_argument, "a field set with an unknown bit is invalid_argument");

    // ---- results that own their value: copies and assignments between value and error ----
    {
        mf::Result<std::string> text = std::string(40, 'x'); // past any small-string buffer
        mf::Result<std::string> error = mf::Error(mf::Code::io);
        mf::Result<std::string> copy = text;
        copy = error;                          // value -> error
        bool became_error = !copy && copy.code() == mf::Code::io;
        copy = text;                           // error -> value
        bool became_value = copy && *copy == *text;
        copy = mf::Result<std::string>(std::string("short")); // value -> value (moved)
        mf::Result<std::string> moved = std::move(copy);
        expect(became_error && became_value && moved && *moved == "short" && *text == std::string(40, 'x'),
               "Result<std::string> copies, moves and assigns between value and error (valgrind: no leak)");
    }

    // ---- dtype helpers ----
    expect(mf::bits(mf::Dtype::float16) == 16 && mf::bits(mf::Dtype::nf4) == 4 &&
               mf::dtype_from_name("bfloat16") == mf::Dtype::bfloat16 && !mf::dtype_from_name("Float16") &&
               mf::name(mf::Dtype::fp8_e4m3) == "fp8_e4m3",
           "bits(), dtype_from_name() and name() agree with the dtype table");

    // ---- value() on an error ----
#ifdef MEMBRANE_FRAME_HPP_EXCEPTIONS
    try {
        (void)mf::FrameView::parse(damaged).value();
        expect(false, "value() on an error throws");
    } catch (const std::system_error &e) {
        expect(e.code() == mf::Code::trailer_mismatch, "value() on an error throws a std::system_error with the code");
    }
#endif

    std::printf("test_cpp: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
