/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM 2.0 policy digests (src/policy.c) against an independent oracle:
 * tests/cli/policy_oracle.py, the Part 3 §23 formulas written with Python's
 * hashlib, whose output is the table below. The TPM's own PolicyGetDigest
 * in trial sessions is the second oracle (tests/cli/test_policy_tpm.sh).
 * Inputs (the same in the oracle): PCR i holds 32 bytes of i + 1; leaf i is
 * SHA-256("leaf<i>"); the key Name is 000b || SHA-256("key"), the NV Name
 * 000b || SHA-256("nv").
 */
#include "testlib.h"
#include "mb/policy.h"
#include "mb/sha.h"

static const struct { const char *name, *hex; } oracle[] = {
        { "pcr_000001", "541090ec7cde775680a064cd80ec69c32916129f79d222e0371d142888c67056" },
        { "pcr_000081", "181ea26fba882ecf9661d4c34ae3447029377d066b6b3a93a37055ae07966795" },
        { "pcr_001290", "55564e8bf6de16931c71f99891474d0a9ca2940e4285403a696f4635bc2e269b" },
        { "pcr_801290", "e4724640c025a23da32ef9c036e595ffbbc9a879b6baaa4775e0341b621bb69a" },
        { "pcr_ffffff", "0d9063dec75e9d01dc4b949694f711a749b6f7dfef8f466e1f9ef3b688f12940" },
        { "pcr_digest_4_7_9_12", "d654cf43735fd45afaa173fad47f803f0b9174fab815b3d535a45cac8e0cd28b" },
        { "or_2", "cb767481b8ac5c90860387eaf01a8afb3a9890fc28b1181e6e7aba9901bf66ba" },
        { "or_8", "d33354801f1dd0afd80b1a84dd6d67901c09aa15a9e2ad380bd46a78d57bc05a" },
        { "authorize_empty", "d69a3ec378d7e982bd5e7900cbcbe15482f8ae4fc3f5652b14e10088f05fc352" },
        { "authorize_ref", "6873bb25abea337b84ce64f93726db16bf1237b654be096b6a468364244dd69e" },
        { "ahash_empty", "b3f1114380e05cb93c494324b4878734317bd28b4d0753c7edd9537751aa5f59" },
        { "ahash_ref", "706dae79e5a47b4985fe1154253fc081a60e5bcbba9f5c656f174195fbd8af48" },
        { "nv_epoch5", "7414c6541502747ccda6120ba7844668b39cb5dcab521c1ae8e3d517ab56fd06" },
        { "nv_then_pcr", "872eedb641ca6c882a67142b3b5e38a17ec6eb8cf444571ebcb7355a8222b5e5" },
        { "auth_value", "8fcd2169ab92694e0c633f1ab772842b8241bbc20288981fc7ac1eddc1fddb0e" },
        { "authorize_then_auth_value", "06c0133692cebd46e1620f33600ac1f6dd8b2bd396901035d973c6ea021eedf0" },
        { "authorize_then_fence", "3469f8be1073976a57f36eb9ef94188a830b787b23be14bbeb389d31f26729e0" },
        { "authorize_fence_auth_value", "13ed576d6846f8a191ca3c48b72c3dcb3ffc22026d2d79b24da29fec8022e8e3" },
        { "name_object", "000bfa9724279196486c6029ff13daec3a2598f30ec7ab5130dcd6963d5218f70064" },
        { "name_nv", "000b9299540c509d8150b6c6950fb076bf49586b5956b30da2b667e82f65721cb6e9" },
        { "tree_1", "15677ade31c49d041aed645935ce55c315487c4199e78dd45e35f009e7495dff" },
        { "tree_2", "cb767481b8ac5c90860387eaf01a8afb3a9890fc28b1181e6e7aba9901bf66ba" },
        { "tree_8", "d33354801f1dd0afd80b1a84dd6d67901c09aa15a9e2ad380bd46a78d57bc05a" },
        { "tree_9", "97a01c93bd39efe2201d34c223dbd8e35468fd3be16ba18e78ee1e3b34bdcfb1" },
        { "tree_64", "540dc23a0860f1bfecbf52ed8c3dfdbfd6920e4afa91537ee92aab18c01d6e08" },
        { "tree_65", "280547115125a6ecac85a530e24cf9875c5991dcbf708fb617eed652417f672f" },
        { "tree_512", "8bb266b9fbdb1c1405773152e9efd8684fb77499c4f56620cf515751fc17843f" },
};

static const uint8_t *expect(const char *name) {
        static uint8_t out[MB_POLICY_NAME_MAX];

        for (size_t i = 0; i < MB_ARRAY_SIZE(oracle); i++)
                if (strcmp(oracle[i].name, name) == 0) {
                        for (size_t k = 0; k < strlen(oracle[i].hex) / 2 && k < sizeof(out); k++)
                                sscanf(oracle[i].hex + 2 * k, "%2hhx", &out[k]);
                        return out;
                }
        fprintf(stderr, "  no oracle value %s\n", name);
        abort();
}

#define CHECK_DIGEST(d, name) do { if (memcmp((d), expect(name), MB_POLICY_SIZE) != 0) { \
        fprintf(stderr, "  %s:%d: digest differs from the oracle's %s\n", __FILE__, __LINE__, name); \
        tl_case_failed = 1; } } while (0)

static void sha256(const char *s, uint8_t *out) {
        mb_hash_buf(MB_ALG_SHA256, s, strlen(s), out);
}

static mb_policy leaf(size_t i) {
        char s[32];
        mb_policy p;

        snprintf(s, sizeof(s), "leaf%zu", i);
        sha256(s, p.d);
        return p;
}

static void name_of(const char *s, uint8_t name[34]) {
        name[0] = 0x00;
        name[1] = 0x0b;
        sha256(s, name + 2);
}

/* The values of the PCRs in mask, ascending. */
static size_t mask_values(uint32_t mask, uint8_t *out) {
        size_t n = 0;

        for (unsigned i = 0; i < 24; i++)
                if (mask >> i & 1)
                        memset(out + 32 * n++, (int) i + 1, 32);
        return n;
}

static mb_err pcr_policy(mb_policy *p, uint32_t mask) {
        uint8_t values[24 * 32], digest[MB_POLICY_SIZE];
        size_t n = mask_values(mask, values);
        mb_err e = mb_policy_pcr_digest(values, n, 32, digest);

        return e != MB_OK ? e : mb_policy_pcr(p, MB_ALG_SHA256, mask, digest);
}

TEST(pcr_masks) {
        static const uint32_t masks[] = { 0x000001, 0x000081, 0x001290, 0x801290, 0xFFFFFF };
        uint8_t values[24 * 32], digest[MB_POLICY_SIZE];

        for (size_t i = 0; i < MB_ARRAY_SIZE(masks); i++) {
                char name[32];
                mb_policy p;

                mb_policy_reset(&p);
                CHECK_EQ_INT(pcr_policy(&p, masks[i]), MB_OK);
                snprintf(name, sizeof(name), "pcr_%06x", masks[i]);
                CHECK_DIGEST(p.d, name);
        }
        CHECK_EQ_INT(mb_policy_pcr_digest(values, mask_values(0x001290, values), 32, digest), MB_OK);
        CHECK_DIGEST(digest, "pcr_digest_4_7_9_12");
}

TEST(pcr_refusals) {
        uint8_t values[25 * 32] = { 0 }, digest[MB_POLICY_SIZE] = { 0 };
        mb_policy p, before;

        memset(p.d, 0x5a, sizeof(p.d));
        before = p;
        CHECK_EQ_INT(mb_policy_pcr(&p, MB_ALG_SHA256, 0, digest), MB_ERR_INVALID);           /* nothing selected */
        CHECK_EQ_INT(mb_policy_pcr(&p, MB_ALG_SHA256, 1u << 24, digest), MB_ERR_INVALID);    /* PCR 24 */
        CHECK_EQ_INT(mb_policy_pcr(&p, 0x0099, 1, digest), MB_ERR_INVALID);                  /* unknown bank */
        CHECK(memcmp(&p, &before, sizeof(p)) == 0);
        CHECK_EQ_INT(mb_policy_pcr_digest(values, 0, 32, digest), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_pcr_digest(values, 25, 32, digest), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_pcr_digest(values, 1, 0, digest), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_pcr_digest(values, 1, MB_HASH_MAX + 1, digest), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_pcr_digest(NULL, 1, 32, digest), MB_ERR_INVALID);
        /* Another bank: the selection names it, the digest is still SHA-256. */
        CHECK_EQ_INT(mb_policy_pcr(&p, MB_ALG_SHA1, 1, digest), MB_OK);
        CHECK(memcmp(&p, &before, sizeof(p)) != 0);
}

TEST(or_two_and_eight) {
        mb_policy b[9], p;

        for (size_t i = 0; i < 9; i++)
                b[i] = leaf(i);
        p = b[1];
        CHECK_EQ_INT(mb_policy_or(&p, b, 2), MB_OK);
        CHECK_DIGEST(p.d, "or_2");
        p = b[7];
        CHECK_EQ_INT(mb_policy_or(&p, b, 8), MB_OK);
        CHECK_DIGEST(p.d, "or_8");
        /* Refused, digest untouched: too few, too many, not a branch. */
        p = b[0];
        CHECK_EQ_INT(mb_policy_or(&p, b, 1), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_or(&p, b, 9), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_or(&p, b, 0), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_or(&p, NULL, 2), MB_ERR_INVALID);
        CHECK(memcmp(&p, &b[0], sizeof(p)) == 0);
        p = b[8];
        CHECK_EQ_INT(mb_policy_or(&p, b, 8), MB_ERR_NOTFOUND);
        CHECK(memcmp(&p, &b[8], sizeof(p)) == 0);
}

TEST(authorize_empty_and_ref) {
        uint8_t name[34], ahash[MB_POLICY_SIZE];
        mb_policy p = leaf(3), approved = leaf(0), before;

        name_of("key", name);
        /* The digest before does not matter: PolicyAuthorize clears it. */
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), NULL, 0), MB_OK);
        CHECK_DIGEST(p.d, "authorize_empty");
        mb_policy_reset(&p);
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), (const uint8_t *) "mshim", 5), MB_OK);
        CHECK_DIGEST(p.d, "authorize_ref");
        mb_policy_auth_value(&p);
        mb_policy_reset(&p);
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), NULL, 0), MB_OK);
        mb_policy_auth_value(&p);
        CHECK_DIGEST(p.d, "authorize_then_auth_value");
        /* A disk key's: the unseal fence (PCR 15 at zero) after PolicyAuthorize. */
        mb_policy_reset(&p);
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), NULL, 0), MB_OK);
        CHECK_EQ_INT(mb_policy_pcrs_zero(&p, 1u << MB_UNSEAL_FENCE_PCR), MB_OK);
        CHECK_DIGEST(p.d, "authorize_then_fence");
        mb_policy_auth_value(&p);
        CHECK_DIGEST(p.d, "authorize_fence_auth_value");
        before = p;
        CHECK_EQ_INT(mb_policy_pcrs_zero(&p, 0), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_pcrs_zero(&p, 1u << 24), MB_ERR_INVALID);
        CHECK(memcmp(&p, &before, sizeof(p)) == 0);
        mb_policy_authorize_ahash(&approved, NULL, 0, ahash);
        CHECK_DIGEST(ahash, "ahash_empty");
        mb_policy_authorize_ahash(&approved, (const uint8_t *) "mshim", 5, ahash);
        CHECK_DIGEST(ahash, "ahash_ref");
        /* Names: nameAlg then exactly its digest; a policyRef of at most 32 octets. */
        before = p;
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name) - 1, NULL, 0), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_authorize(&p, name, 1, NULL, 0), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_authorize(&p, NULL, 34, NULL, 0), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), name, 33), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), NULL, 1), MB_ERR_INVALID);
        name[1] = 0x04;         /* SHA-1 Name with a SHA-256-sized digest */
        CHECK_EQ_INT(mb_policy_authorize(&p, name, sizeof(name), NULL, 0), MB_ERR_INVALID);
        CHECK(memcmp(&p, &before, sizeof(p)) == 0);
}

TEST(nv_unsigned_le) {
        uint8_t name[34], epoch[8] = { 0, 0, 0, 0, 0, 0, 0, 5 }, big[MB_HASH_MAX + 1] = { 0 };
        mb_policy p, before;

        name_of("nv", name);
        mb_policy_reset(&p);
        CHECK_EQ_INT(mb_policy_nv(&p, name, sizeof(name), epoch, sizeof(epoch), 0, MB_TPM_EO_UNSIGNED_LE), MB_OK);
        CHECK_DIGEST(p.d, "nv_epoch5");
        CHECK_EQ_INT(pcr_policy(&p, 0x001290), MB_OK);
        CHECK_DIGEST(p.d, "nv_then_pcr");
        /* The same in one call: the signed mode's approvedPolicy. */
        {
                uint8_t values[24 * 32];
                size_t n = mask_values(0x001290, values);
                mb_policy q, q_before;

                memset(&q, 0x33, sizeof(q));
                q_before = q;
                CHECK_EQ_INT(mb_policy_approved(name, sizeof(name), 5, MB_ALG_SHA256, 0x001290, values, 32, &q), MB_OK);
                CHECK_DIGEST(q.d, "nv_then_pcr");
                CHECK_EQ_INT(n, 4);
                memset(&q, 0x33, sizeof(q));
                CHECK_EQ_INT(mb_policy_approved(name, sizeof(name), 5, MB_ALG_SHA256, 0x001290, values, 20, &q), MB_ERR_INVALID);
                CHECK_EQ_INT(mb_policy_approved(name, sizeof(name), 5, MB_ALG_SHA256, 0, values, 32, &q), MB_ERR_INVALID);
                CHECK_EQ_INT(mb_policy_approved(name, 3, 5, MB_ALG_SHA256, 0x001290, values, 32, &q), MB_ERR_INVALID);
                CHECK(memcmp(&q, &q_before, sizeof(q)) == 0);
        }
        before = p;
        CHECK_EQ_INT(mb_policy_nv(&p, name, 33, epoch, 8, 0, MB_TPM_EO_UNSIGNED_LE), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_nv(&p, name, 34, big, sizeof(big), 0, MB_TPM_EO_UNSIGNED_LE), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_nv(&p, name, 34, NULL, 8, 0, MB_TPM_EO_UNSIGNED_LE), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_nv(&p, name, 34, epoch, 8, 0, MB_TPM_EO_BITCLEAR + 1), MB_ERR_INVALID);
        CHECK(memcmp(&p, &before, sizeof(p)) == 0);
}

/* The same made-up public areas as the oracle's. */
TEST(names) {
        uint8_t pub[2 + 8 + 40], nv[2 + 14], name[MB_POLICY_NAME_MAX];
        size_t n = 0;

        pub[0] = 0;
        pub[1] = sizeof(pub) - 2;
        memcpy(pub + 2, "\x00\x23\x00\x0b\x00\x04\x00\x72", 8);
        for (int i = 0; i < 40; i++)
                pub[10 + i] = (uint8_t) i;
        CHECK_EQ_INT(mb_policy_name(pub, sizeof(pub), false, name, &n), MB_OK);
        CHECK(n == 34 && memcmp(name, expect("name_object"), 34) == 0);
        CHECK(mb_policy_is_name(name, n));
        memcpy(nv, "\x00\x0e\x01\x80\x4d\x53\x00\x0b\x20\x06\x00\x0a\x00\x00\x00\x08", sizeof(nv));
        CHECK_EQ_INT(mb_policy_name(nv, sizeof(nv), true, name, &n), MB_OK);
        CHECK(n == 34 && memcmp(name, expect("name_nv"), 34) == 0);
        /* A TPM2B whose size is not the rest, too short, an unknown nameAlg. */
        n = 4242;
        CHECK_EQ_INT(mb_policy_name(nv, sizeof(nv) - 1, true, name, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_name((const uint8_t *) "\x00\x03\x00\x23\x00", 5, false, name, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_name((const uint8_t *) "\x00\x04\x00\x23\x00\x99", 6, false, name, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_name(NULL, 0, false, name, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(n, 4242);
        CHECK(!mb_policy_is_name(name, 33) && !mb_policy_is_name(name, 1) && !mb_policy_is_name(NULL, 34));
}

TEST(auth_value) {
        mb_policy p;

        mb_policy_reset(&p);
        mb_policy_auth_value(&p);
        CHECK_DIGEST(p.d, "auth_value");
}

/* Walks each leaf's path as a session would (PolicyOR after PolicyOR) and
 * checks it ends at the oracle's root. */
static void check_tree(size_t n) {
        static mb_policy leaves[MB_POLICY_TREE_MAX_LEAVES];
        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX], root;
        size_t counts[MB_POLICY_TREE_MAX_DEPTH], depth, want_depth = n <= 8 ? 1 : n <= 64 ? 2 : 3;
        char name[32];

        for (size_t i = 0; i < n; i++)
                leaves[i] = leaf(i);
        snprintf(name, sizeof(name), "tree_%zu", n);
        CHECK_EQ_INT(mb_policy_tree_root(leaves, n, &root), MB_OK);
        CHECK_DIGEST(root.d, name);
        for (size_t i = 0; i < n; i++) {
                mb_policy p = leaves[i];

                if (mb_policy_tree_path(leaves, n, i, steps, counts, &depth) != MB_OK) {
                        CHECK(!"tree_path failed");
                        return;
                }
                CHECK_EQ_INT(depth, want_depth);
                for (size_t s = 0; s < depth; s++)
                        CHECK_EQ_INT(mb_policy_or(&p, steps[s], counts[s]), MB_OK);
                CHECK_DIGEST(p.d, name);
        }
}

TEST(or_trees) {
        static const size_t sizes[] = { 1, 2, 8, 9, 64, 65, 512 };

        for (size_t i = 0; i < MB_ARRAY_SIZE(sizes); i++)
                check_tree(sizes[i]);
}

TEST(tree_refusals) {
        static mb_policy leaves[MB_POLICY_TREE_MAX_LEAVES + 1];
        mb_policy steps[MB_POLICY_TREE_MAX_DEPTH][MB_POLICY_OR_MAX], root, before;
        size_t counts[MB_POLICY_TREE_MAX_DEPTH] = { 7, 7, 7 }, depth = 7;

        memset(&root, 0x77, sizeof(root));
        before = root;
        CHECK_EQ_INT(mb_policy_tree_root(leaves, 0, &root), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_tree_root(leaves, MB_POLICY_TREE_MAX_LEAVES + 1, &root), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_policy_tree_root(NULL, 1, &root), MB_ERR_INVALID);
        CHECK(memcmp(&root, &before, sizeof(root)) == 0);
        CHECK_EQ_INT(mb_policy_tree_path(leaves, 5, 5, steps, counts, &depth), MB_ERR_INVALID);
        CHECK_EQ_INT(depth, 7);
        CHECK_EQ_INT(counts[0], 7);
}

int main(void) {
        RUN(pcr_masks);
        RUN(pcr_refusals);
        RUN(or_two_and_eight);
        RUN(authorize_empty_and_ref);
        RUN(nv_unsigned_le);
        RUN(names);
        RUN(auth_value);
        RUN(or_trees);
        RUN(tree_refusals);
        TL_EXIT();
}
