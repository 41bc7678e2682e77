/* The solver's search in C: the same search as protocol/solver/search.py, move for move.
 *
 * protocol/solver/search.py is the reference: its docstrings and docs/solver.md say what each rule
 * is and why it is sound. This file follows it function by function (same names, same
 * order of moves, same forced links, same sleep sets, same table), so that on any position
 * and any set of rules both searches visit the same nodes and give the same verdict and
 * line, and keep the same number of positions in the table
 * (tests/protocol/solver/test_fastsearch.py checks this). What differs is the machinery: the
 * position lives in fixed arrays, the key is built into a buffer, the transposition
 * table is an open-addressing hash table of 8-byte slots over entries (exact key and sleep
 * set) stored in blocks that never move, its hash is kept by the moves (so a child's slot
 * is asked for before its move is made), and nothing is allocated per node.
 *
 * Entry point: search(cols, down, stock, cells, found, wasp, any_time, rules, limit,
 * seconds, timed, clock, memory) -> (outcome, line, nodes, positions kept in the table),
 * with the arguments of Search(...) and of search() in protocol/solver/search.py, the rules as a
 * bit mask (RULE_* below), ``timed`` telling whether ``seconds`` and ``clock`` apply, and
 * ``memory`` the bytes the table may take (0: no bound; see State.bytes). Every
 * 1,024 nodes it reads the clock (when timed) and lets Python run its signal handlers (an
 * exception they raise ends the search). check_hashes(on) turns on a check of the kept
 * hash at every position, for tests.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define MAXCOLS 16
#define MAXLEN 64
#define MAXCELLS 8
#define STOCK 200
#define FOUNDATION 300
#define CELL_BASE 100
#define NO_CARD (-1)
#define WON 0
#define LOST 1
#define UNDECIDED 2
#define MEMORY 3 /* undecided: the table reached its byte budget (protocol.solver.search.MEMORY) */
#define NO_CARD_SLOT 52 /* pads a moved group to whole blocks of four (set_places) */
#define WORDS 5 /* sleep-set bits: card + 52 * kind, kind 0..4 (Search.bit) */
#define BLOCK_SHIFT 26 /* the table's entries live in blocks of 64 MB */
#define BLOCKS 511     /* under 32 GB of entries: offsets count 8-byte units in 32 bits */

enum {
    RULE_SYMMETRY = 1,
    RULE_LINKS = 2,
    RULE_TAILS = 4,
    RULE_DEAD = 8,
    RULE_KINGS = 16,
    RULE_SLEEP = 32,
    RULE_COMMUTE = 64,
    RULE_SETTLED = 128,
    RULE_DIRECT = 256,
    RULE_EARLY = 512, /* rules 7, 8 and 9 before the deal under when-stuck: for finding wins only */
    RULE_BOTTOMS = 1024,
    RULE_NATURAL = 2048, /* with RULE_EARLY: links onto a run of three forced too, for finding wins only */
    RULE_REVERSIBLE = 4096,
    RULE_ANCHORED = 8192,
};

typedef struct {
    uint64_t w[WORDS];
} Mask;

static inline int mask_any(const Mask *m) {
    return (m->w[0] | m->w[1] | m->w[2] | m->w[3] | m->w[4]) != 0;
}
static inline void mask_set(Mask *m, int bit) { m->w[bit >> 6] |= (uint64_t)1 << (bit & 63); }
static inline void mask_clear(Mask *m, int bit) { m->w[bit >> 6] &= ~((uint64_t)1 << (bit & 63)); }
static inline int mask_test(const Mask *m, int bit) { return (int)((m->w[bit >> 6] >> (bit & 63)) & 1); }
/* The 52 bits of each kind (bits 52 * kind ... 52 * kind + 51), made at import. */
static Mask KIND[5];

static void make_kinds(void) {
    memset(KIND, 0, sizeof KIND);
    for (int kind = 0; kind < 5; kind++)
        for (int b = 52 * kind; b < 52 * kind + 52; b++) mask_set(&KIND[kind], b);
}

/* Each card's rank less one (card % 13: 0 an Ace, 12 a King), read where it is hot. */
static unsigned char RANK[52];

/* The five bits of each card (card + 52 * kind), and the card of each bit, made at import. */
static Mask CARD_BITS[52];
static unsigned char CARD_OF_BIT[WORDS * 64];

static void make_card_bits(void) {
    for (int card = 0; card < 52; card++) RANK[card] = (unsigned char)(card % 13);
    for (int b = 0; b < WORDS * 64; b++) CARD_OF_BIT[b] = (unsigned char)(b % 52);
    memset(CARD_BITS, 0, sizeof CARD_BITS);
    for (int card = 0; card < 52; card++)
        for (int kind = 0; kind < 5; kind++) mask_set(&CARD_BITS[card], card + 52 * kind);
}

static inline void mask_clear_card(Mask *m, int card) {
    for (int i = 0; i < WORDS; i++) m->w[i] &= ~CARD_BITS[card].w[i];
}

static inline void mask_clear_kind(Mask *m, int kind) {
    for (int i = 0; i < WORDS; i++) m->w[i] &= ~KIND[kind].w[i];
}
static inline int mask_above_links(const Mask *m) {
    return (m->w[0] >> 52) != 0 || m->w[1] || m->w[2] || m->w[3] || m->w[4];
}

static const int KINGS[4] = {12, 25, 38, 51};
static const Mask NO_SLEEP; /* the empty set */

typedef struct {
    short card, source, target; /* card -1: the deal */
    unsigned char glen;         /* cards in the moved group (the deal: cards dealt) */
    unsigned char flipped;
    unsigned char ncollected;
    signed char group[MAXLEN];
    signed char collected[4][3]; /* (column, flipped, suit) */
    uint64_t hash;               /* the table's hash before the move */
} Undo;

typedef struct {
    short card, source, target;
} Move;

typedef struct {
    /* the position */
    int ncols;
    signed char cols[MAXCOLS][MAXLEN];
    int len[MAXCOLS];
    int down[MAXCOLS];
    signed char stock[MAXCOLS];
    int nstock;
    int cells[MAXCELLS];
    int ncells;
    int found, turned;
    int wasp, any_time;
    int symmetry, tails, settled, direct, early, natural, kings, links, checks, bottoms;
    int reversible;  /* rule 10 (Wasp under when-stuck, before the deal) */
    int anchored;    /* rule 11 (the same) */
    int stock_suits; /* the suits with a card in the reserve, as bits (rule 10) */
    int where[53], row[53]; /* [NO_CARD_SLOT]: written for the padding of a moved group */
    unsigned char hidden[52];
    /* rule 5's cycle search */
    uint32_t marks[52];
    uint32_t stamp;
    int stack[53];
    int later[52];
    /* rule 3's table: dead[c][count] for column c at face-down count ``count`` */
    unsigned char dead[MAXCOLS][MAXLEN];
    /* the path */
    Undo *path;
    int depth;
    size_t path_cap;
    long long nodes;
    /* seeds of rule 5 (the cards the moves since the parent concern) */
    int seeds[52 * 8];
    int nseeds;
    int seeds_full; /* too many to keep: test every card */
    /* the table */
    unsigned char *blocks[BLOCKS]; /* the entries, in blocks that never move */
    int nblocks;
    size_t used; /* bytes used in the last block */
    size_t entries;
    int words;
    uint64_t *slots; /* the hash's top 32 bits << 32 | (entry's offset in 8-byte units + 1) */
    int bits;        /* log2 of the slot count: a key's first slot is its hash's top bits */
    unsigned char *last; /* the sleep set of the entry stored last */
    uint64_t hash;       /* the table's hash of the position (position_hash), kept by the moves */
    /* the links first_link() saw in its last scan, which found nothing to force: the
     * position's links, in column order, kept for gen_moves() (valid until a move) */
    Move seen[MAXCOLS];
    int seen_empty[MAXCOLS]; /* and the empty columns */
    int nseen, nseen_empty, seen_valid;
    /* moves of the open frames, stacked */
    Move *moves;
    size_t nmoves, moves_cap;
    int failed; /* 1: out of memory; 2: a kept hash was wrong; 3: the byte budget reached */
    /* The table's bytes: its slots and the entries stored (what a long search touches; the
     * unused rest of the last block of entries is not counted), and the bound on them. */
    size_t bytes, memory;
} State;

/* -- helpers -------------------------------------------------------------------------- */

static int grow(void **buf, size_t *cap, size_t need, size_t item) {
    if (need <= *cap) return 1;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < need) cap2 *= 2;
    void *p = realloc(*buf, cap2 * item);
    if (!p) return 0;
    *buf = p;
    *cap = cap2;
    return 1;
}

/* The table's memory (its slots and its blocks of entries), zeroed. A long search's reads
 * land all over hundreds of megabytes, so with 4 kB pages nearly every one also misses the
 * TLB; on Linux, memory for a table that has grown large (``huge``: the slots from 4 MB, the
 * entries from the second block) is mapped directly and marked for transparent huge pages
 * (2 MB), which the kernel gives where it can. A small search keeps ordinary pages: a huge
 * page costs its whole 2 MB to clear, and the kernel may compact memory to find one. */
#define HUGE_SLOTS ((size_t)4 << 20) /* slot arrays from this size, and blocks after the first */

static void *table_alloc(size_t size, int huge) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        madvise(p, size, MADV_HUGEPAGE);
        return p;
    }
#endif
    (void)huge;
    return calloc(1, size);
}

static void table_free(void *p, size_t size, int huge) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge) {
        if (p) munmap(p, size);
        return;
    }
#endif
    (void)size;
    (void)huge;
    free(p);
}

static int carries_tail(State *s, int card, int source) {
    if (source >= s->ncols) return source < STOCK && RANK[card] == 0;
    signed char *col = s->cols[source];
    int row = s->row[card];
    if (s->len[source] - row != RANK[card] + 1) return 0;
    for (int above = 1; above <= RANK[card]; above++)
        if (col[row + above] != card - above) return 0;
    return 1;
}

/* -- keys ------------------------------------------------------------------------------- */

static inline void copy8(unsigned char *to, const signed char *from) {
    uint64_t w;
    __builtin_memcpy(&w, from, 8);
    __builtin_memcpy(to, &w, 8);
}

/* Copy a column's cards 8 bytes at a time: the column arrays (MAXLEN) and the key buffer
 * leave room for the bytes copied past the last card, which the next part overwrites.
 * Straight-line for the usual lengths: compilers turn a loop here into a call to memcpy,
 * which costs more than the copy. */
static inline int put_cards(unsigned char *key, int k, const signed char *col, int len) {
    copy8(key + k, col); /* three words whatever the length: no branch to guess */
    copy8(key + k + 8, col + 8);
    copy8(key + k + 16, col + 16);
    for (int j = 24; j < len; j += 8) copy8(key + k + j, col + j);
    return k + len;
}

/* Copy ``n`` cards between column or group arrays (``to_room``, ``from_room``: the bytes
 * their arrays hold from there on): three words when both have room for them, whatever
 * ``n`` (a memcpy of a variable length, or a loop, costs more); the bytes past ``n`` are
 * past the column's length or the group's, where nothing is read. */
static inline void copy_cards(signed char *to, int to_room, const signed char *from, int from_room, int n) {
    if (n <= 24 && to_room >= 24 && from_room >= 24) {
        copy8((unsigned char *)to, from);
        copy8((unsigned char *)to + 8, from + 8);
        copy8((unsigned char *)to + 16, from + 16);
    } else {
        memcpy(to, from, (size_t)n);
    }
}

static int build_key(State *s, unsigned char *key) {
    int n = s->ncols;
    int k = 0;
    if (s->nstock) key[k++] = 0xff;
    if (!s->symmetry) {
        for (int i = 0; i < n; i++) {
            key[k++] = (unsigned char)(200 + s->down[i]);
            k = put_cards(key, k, s->cols[i], s->len[i]);
        }
    } else {
        int fixed = s->nstock ? 3 : 0;
        if (fixed > n) fixed = n;
        for (int i = 0; i < fixed; i++) {
            key[k++] = (unsigned char)(200 + s->down[i]);
            k = put_cards(key, k, s->cols[i], s->len[i]);
        }
        /* the other columns by bottom card (read off a set of the bottom cards, lowest
         * first), the empty ones last */
        uint64_t bottoms = 0; /* the bottom cards, as bits: read from the lowest */
        int empties = 0;
        for (int i = fixed; i < n; i++) {
            if (s->len[i])
                bottoms |= (uint64_t)1 << s->cols[i][0];
            else
                empties++;
        }
        while (bottoms) {
            int i = s->where[__builtin_ctzll(bottoms)];
            bottoms &= bottoms - 1;
            key[k++] = (unsigned char)(200 + s->down[i]);
            k = put_cards(key, k, s->cols[i], s->len[i]);
        }
        for (int j = 0; j < empties; j++) key[k++] = 200; /* an empty column: no card face down */
    }
    if (s->ncells) {
        key[k++] = 0xfe;
        if (s->symmetry) {
            int cells[MAXCELLS], c = 0;
            for (int i = 0; i < s->ncells; i++) {
                int card = s->cells[i];
                if (card == NO_CARD) continue;
                int j = c++;
                while (j > 0 && cells[j - 1] > card) {
                    cells[j] = cells[j - 1];
                    j--;
                }
                cells[j] = card;
            }
            for (int i = 0; i < c; i++) key[k++] = (unsigned char)cells[i];
        } else {
            for (int i = 0; i < s->ncells; i++) key[k++] = (unsigned char)(s->cells[i] + 1);
        }
    }
    return k;
}

/* The table's hash: a sum (xor) of one random word per fact of the position, so that the
 * hash of a child can be had from its parent's before the move is made, and its slot asked
 * for early (run_search). Facts: each card on the tableau with the card it lies on (or none),
 * each face-down card, the bottom card of each column that keeps its place in the key (all
 * columns without rule 1; columns 1-3 before the deal), each card in a reserve cell (with
 * its cell where cells keep their places), and whether the reserve is still to come. Equal
 * keys have equal facts, hence equal hashes; the key itself decides equality. */
static uint64_t ZB[52][53]; /* card, the card it lies on + 1 (0: a column's bottom) */
static uint64_t ZH[52];     /* face down */
static uint64_t ZF[MAXCOLS][52];
static uint64_t ZC[MAXCELLS + 1][52]; /* row 0: cells in any order; 1 + i: cell i */
static uint64_t ZS;
static int CHECK_HASHES; /* check_hashes(): compare the kept hash with the position's at every entry */

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void make_hash_words(void) {
    uint64_t x = 0x5C0A910ull;
    for (int c = 0; c < 52; c++) {
        for (int b = 0; b < 53; b++) ZB[c][b] = splitmix(&x);
        ZH[c] = splitmix(&x);
        for (int i = 0; i < MAXCOLS; i++) ZF[i][c] = splitmix(&x);
        for (int i = 0; i <= MAXCELLS; i++) ZC[i][c] = splitmix(&x);
    }
    ZS = splitmix(&x);
}

static inline int fixed_column(const State *s, int i) { return !s->symmetry || (s->nstock && i < 3); }

static inline uint64_t card_word(const State *s, int card, int below, int col) {
    uint64_t t = ZB[card][below + 1];
    if (below < 0 && fixed_column(s, col)) t ^= ZF[col][card];
    return t;
}

static inline uint64_t cell_word(const State *s, int card, int cell) {
    return s->symmetry ? ZC[0][card] : ZC[1 + cell][card];
}

static uint64_t position_hash(const State *s) {
    uint64_t h = s->nstock ? ZS : 0;
    for (int i = 0; i < s->ncols; i++) {
        const signed char *col = s->cols[i];
        int below = -1;
        for (int r = 0; r < s->len[i]; r++) {
            int c = col[r];
            h ^= card_word(s, c, below, i);
            if (r < s->down[i]) h ^= ZH[c];
            below = c;
        }
    }
    for (int i = 0; i < s->ncells; i++)
        if (s->cells[i] != NO_CARD) h ^= cell_word(s, s->cells[i], i);
    return h;
}

/* The hash of the position after ``move`` (before it is made), collections and forced
 * links aside (a guess for asking for the slot early: a wrong one costs only time). */
static uint64_t child_hash(const State *s, uint64_t h, Move move) {
    int card = move.card, source = move.source, target = move.target;
    if (card < 0) return h;
    int tlen = s->len[target];
    int top = tlen ? s->cols[target][tlen - 1] : -1;
    h ^= card_word(s, card, top, target);
    if (source >= CELL_BASE) return h ^ cell_word(s, card, source - CELL_BASE);
    int row = s->row[card];
    int below = row ? s->cols[source][row - 1] : -1;
    h ^= card_word(s, card, below, source);
    if (row && row == s->down[source]) h ^= ZH[below];
    return h;
}

/* An entry, from an 8-byte boundary: the key's length, the key, then the sleep set as a
 * count and that many bit numbers (one byte each, count included; two in Wasp, whose bits
 * go up to 52 * 5). Sleep sets are mostly empty or small, so this is far shorter than the
 * set's words; a stored set is only ever replaced by one with fewer members (enter),
 * which fits. */
static inline int sleep_width(const State *s) { return s->words > 1 ? 2 : 1; }

static int sleep_count(const State *s, const Mask *m) {
    int n = 0; /* sets are mostly empty or small: count their members one by one */
    for (int w = 0; w < s->words; w++)
        for (uint64_t bits = m->w[w]; bits; bits &= bits - 1) n++;
    return n;
}

static int sleep_bytes(const State *s, const Mask *m) { return (1 + sleep_count(s, m)) * sleep_width(s); }

static inline unsigned char *put_number(unsigned char *q, int wide, int v) {
    if (wide) *q++ = (unsigned char)(v >> 8);
    *q++ = (unsigned char)v;
    return q;
}

static inline const unsigned char *get_number(const unsigned char *q, int wide, int *v) {
    int x = *q++;
    if (wide) x = x << 8 | *q++;
    *v = x;
    return q;
}

static void sleep_store(const State *s, unsigned char *p, const Mask *m) {
    int wide = s->words > 1;
    unsigned char *q = put_number(p, wide, sleep_count(s, m));
    for (int w = 0; w < s->words; w++)
        for (uint64_t bits = m->w[w]; bits; bits &= bits - 1) q = put_number(q, wide, 64 * w + __builtin_ctzll(bits));
}

static void sleep_load(const State *s, const unsigned char *p, Mask *m) {
    memset(m, 0, sizeof *m);
    int wide = s->words > 1, n, b;
    const unsigned char *q = get_number(p, wide, &n);
    for (int i = 0; i < n; i++) {
        q = get_number(q, wide, &b);
        mask_set(m, b);
    }
}

static inline unsigned char *entry_at(State *s, uint64_t slot) {
    uint64_t unit = (slot & 0xffffffffu) - 1;
    return s->blocks[unit >> (BLOCK_SHIFT - 3)] + ((unit << 3) & (((uint64_t)1 << BLOCK_SHIFT) - 1));
}

static int table_grow(State *s) {
    int bits = s->bits + 1;
    size_t cap = (size_t)1 << bits;
    if (s->memory && s->bytes + cap * sizeof(uint64_t) > s->memory) { /* old and new, while copied */
        s->failed = 3;
        return 0;
    }
    uint64_t *slots = table_alloc(cap * sizeof(uint64_t), cap * sizeof(uint64_t) >= HUGE_SLOTS);
    if (!slots) return 0;
    size_t old = (size_t)1 << s->bits;
    for (size_t i = 0; i < old; i++) {
        uint64_t slot = s->slots[i];
        if (!slot) continue;
        /* the first slot comes from the stored top bits: no key is read again */
        size_t j = (size_t)(slot >> (64 - bits));
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = slot;
    }
    table_free(s->slots, old * sizeof(uint64_t), old * sizeof(uint64_t) >= HUGE_SLOTS);
    s->slots = slots;
    s->bits = bits;
    s->bytes += (cap - old) * sizeof(uint64_t);
    return 1;
}

static inline size_t first_slot(State *s, uint64_t h) { return (size_t)(h >> (64 - s->bits)); }

/* Find ``key`` (hash ``h``): return the entry's sleep set (sleep_load), or NULL with
 * *free_slot set to the slot where table_insert() may store it. */
static unsigned char *table_find(State *s, const unsigned char *key, int len, uint64_t h, size_t *free_slot) {
    uint64_t tag = h >> 32;
    size_t mask = ((size_t)1 << s->bits) - 1;
    size_t i = first_slot(s, h);
    for (;;) {
        uint64_t slot = s->slots[i];
        if (!slot) break;
        if ((slot >> 32) == tag) {
            unsigned char *entry = entry_at(s, slot);
            if (entry[0] == len && !memcmp(entry + 1, key, (size_t)len)) return entry + 1 + len;
        }
        i = (i + 1) & mask;
    }
    *free_slot = i;
    return NULL;
}

/* Store ``key`` with ``sleep`` in the free slot ``i`` table_find() gave (nothing stored
 * since). */
static void table_insert(State *s, const unsigned char *key, int len, uint64_t h, const Mask *sleep, size_t i) {
    uint64_t tag = h >> 32;
    size_t mask = ((size_t)1 << s->bits) - 1;
    size_t size = (1 + (size_t)len + (size_t)sleep_bytes(s, sleep) + 7) & ~(size_t)7;
    if (!s->nblocks || s->used + size > ((size_t)1 << BLOCK_SHIFT)) {
        if (s->nblocks == BLOCKS || !(s->blocks[s->nblocks] = table_alloc((size_t)1 << BLOCK_SHIFT, s->nblocks > 0))) {
            s->failed = 1;
            return;
        }
        s->nblocks++;
        s->used = 0;
    }
    unsigned char *entry = s->blocks[s->nblocks - 1] + s->used;
    uint64_t unit = ((uint64_t)(s->nblocks - 1) << (BLOCK_SHIFT - 3)) + (s->used >> 3);
    s->used += size;
    entry[0] = (unsigned char)len;
    memcpy(entry + 1, key, (size_t)len);
    sleep_store(s, entry + 1 + len, sleep);
    s->last = entry + 1 + len;
    s->entries++;
    s->slots[i] = (tag << 32) | (unit + 1);
    s->bytes += size;
    if (s->memory && s->bytes > s->memory) s->failed = 3; /* stored: the table stays whole */
    if (!s->failed && s->entries * 2 > mask + 1 && (s->bits >= 32 || !table_grow(s)) && !s->failed)
        s->failed = 1;
}

/* -- move generation -------------------------------------------------------------------- */

/* Rule 10's crossing (Search.crossing_legal): whether a card of ``target`` can be linked
 * onto the top of ``source`` now (the card below that top lies face up in ``target``). */
static inline int crossing_legal(const State *s, int source, int target) {
    int top = s->cols[source][s->len[source] - 1];
    return RANK[top] && s->where[top - 1] == target && !s->hidden[top - 1];
}

/* Rule 10's test (Search.reversible_link) for the link of ``card``, face up at row 0 of
 * ``source``, onto its successor on top of ``target``: no card of its suit can be collected
 * before the deal, and no crossing is legal. */
static inline int reversible_link(const State *s, int card, int source, int target) {
    return (s->stock_suits >> (card / 13) & 1) && !crossing_legal(s, source, target);
}

/* Rule 10 where a crossing is legal (Search.reversible_choice): at the first link from row 0
 * that rule 10 would force but for its crossing, keep only that link and the crossing among
 * the ``count`` moves from ``start``; return how many are kept. */
static int reversible_choice(State *s, size_t start, int count) {
    int n = s->ncols;
    for (int target = 0; target < n; target++) {
        int len = s->len[target];
        if (!len) continue;
        int top = s->cols[target][len - 1];
        if (!RANK[top]) continue;
        int card = top - 1, source = s->where[card];
        if (source >= n || source == target || s->hidden[card] || s->row[card]) continue;
        if (!(s->stock_suits >> (card / 13) & 1) || !crossing_legal(s, source, target)) continue;
        int crossing = s->cols[source][s->len[source] - 1] - 1;
        size_t kept = start;
        for (size_t i = start; i < start + (size_t)count; i++) {
            Move m = s->moves[i];
            if ((m.card == card && m.target == target) || (m.card == crossing && m.target == source))
                s->moves[kept++] = m;
        }
        s->nmoves = kept;
        return (int)(kept - start);
    }
    return count;
}

/* Rule 11's first test (Search.anchored_run): whether ``top`` and the cards above it in its
 * suit, up to a King or to a card whose successor is in the reserve, each lie face down, or
 * face up on their successor or first in the face-up part of their column (none of them can
 * ever join another card's group before the deal). */
static inline int anchored_run(const State *s, int top) {
    for (int card = top;; card++) {
        int column = s->where[card];
        if (column >= s->ncols) return 0;
        int row = s->row[card], first = s->hidden[card] || row == s->down[column];
        if (RANK[card] == 12 || s->where[card + 1] == STOCK) return first;
        if (!first && s->cols[column][row - 1] != card + 1) return 0;
    }
}

/* Rule 11's second test (Search.anchored_group): whether the cards of ``source`` from
 * ``card`` up read down by one in its suit to an Ace or to a card whose predecessor is in
 * the reserve (no other card can ever join the group before the deal). */
static inline int anchored_group(const State *s, int card, int source) {
    const signed char *col = s->cols[source];
    int row = s->row[card], top = s->len[source] - 1;
    while (row < top && RANK[col[row]] && col[row + 1] == col[row] - 1) row++;
    int last = col[row];
    return row == top && (!RANK[last] || s->where[last - 1] == STOCK);
}

static int first_link(State *s, Move *out, int rule2, int rule9, int rule10, int rule11) {
    int n = s->ncols;
    s->nseen = 0;
    s->nseen_empty = 0;
    s->seen_valid = 0;
    for (int target = 0; target < n; target++) {
        int len = s->len[target];
        if (!len) {
            s->seen_empty[s->nseen_empty++] = target;
            continue;
        }
        signed char *col = s->cols[target];
        int top = col[len - 1];
        if (!(RANK[top])) continue;
        int card = top - 1;
        int source = s->where[card];
        if (source < n) {
            if (source == target || s->hidden[card]) continue;
            s->seen[s->nseen++] = (Move){(short)card, (short)source, (short)target};
            /* Rule 9 (Wasp, after the deal): a face-up card at row 0 onto its successor. */
            if (rule9 && !s->row[card]) goto found;
            /* Rule 10 (Wasp under when-stuck, before the deal): the same where it can be undone. */
            if (rule10 && !s->row[card] && reversible_link(s, card, source, target)) goto found;
            /* Rule 11 (the same): onto an anchored run, or of an anchored group. */
            if (rule11 && (anchored_run(s, top) || anchored_group(s, card, source))) goto found;
            if (!rule2) continue;
            /* the tail test's first check, here without a call */
            if (s->tails && s->len[source] - s->row[card] == RANK[card] + 1 && carries_tail(s, card, source))
                goto found;
        } else {
            if (source >= STOCK) continue;
            s->seen[s->nseen++] = (Move){(short)card, (short)source, (short)target}; /* a cell's */
            if (!rule2) continue;
            if (s->tails && carries_tail(s, card, source)) goto found;
        }
        if (s->natural) {
            /* Not a pruning rule (the first look for a win): the column's top three cards or
             * more, face up, read down by one in a suit (Search.first_link). */
            int first = s->down[target], row = len - 1;
            while (row > first && RANK[col[row]] != 12 && col[row - 1] == col[row] + 1) row--;
            if (len - row >= 3) goto found;
        }
        {
            int head = col[0];
            if (!s->down[target] && RANK[head] == 12 && len <= 13 && head - len + 1 == top) {
                int row = len - 1;
                while (row && col[row - 1] == col[row] + 1) row--;
                if (!row) goto found;
            }
        }
        continue;
    found:
        out->card = (short)card;
        out->source = (short)source;
        out->target = (short)target;
        return 1;
    }
    s->seen_valid = 1;
    return 0;
}

/* Room gen_moves reserves: more than any position's moves (a link per column, one per
 * cell, each card into each representative empty column, the deal). */
#define MOVES_ROOM (MAXCOLS + MAXCELLS + 52 * MAXCOLS + 1)

static inline void push_move(State *s, int card, int source, int target) {
    Move *m = &s->moves[s->nmoves++];
    m->card = (short)card;
    m->source = (short)source;
    m->target = (short)target;
}

/* Append the legal moves to s->moves in search order; return how many. */
static int gen_moves(State *s) {
    int n = s->ncols;
    Move turning[MAXCOLS], emptying[MAXCOLS], celled[MAXCOLS], rest[MAXCOLS];
    int nt = 0, ne = 0, nc = 0, nr = 0;
    int empty[MAXCOLS], nempty = 0;
    int idle = 0;
    size_t start = s->nmoves;
    if (!grow((void **)&s->moves, &s->moves_cap, start + MOVES_ROOM, sizeof(Move))) {
        s->failed = 1;
        return 0;
    }
    if (s->seen_valid) {
        /* first_link() has just looked at every column's top (enter): its links are the
         * position's */
        s->seen_valid = 0;
        for (int i = 0; i < s->nseen_empty; i++) empty[nempty++] = s->seen_empty[i];
        for (int i = 0; i < s->nseen; i++) {
            Move m = s->seen[i];
            if (m.source >= n)
                celled[nc++] = m;
            else if (!s->row[m.card])
                emptying[ne++] = m;
            else if (s->row[m.card] == s->down[m.source])
                turning[nt++] = m;
            else
                rest[nr++] = m;
        }
    } else {
        for (int target = 0; target < n; target++) {
            int len = s->len[target];
            if (!len) {
                empty[nempty++] = target;
                continue;
            }
            int top = s->cols[target][len - 1];
            if (!(RANK[top])) continue;
            int card = top - 1;
            int source = s->where[card];
            if (source < n) {
                if (source != target && !s->hidden[card]) {
                    int row = s->row[card];
                    Move m = {(short)card, (short)source, (short)target};
                    if (!row)
                        emptying[ne++] = m;
                    else if (row == s->down[source])
                        turning[nt++] = m;
                    else
                        rest[nr++] = m;
                }
            } else if (source < STOCK) {
                Move m = {(short)card, (short)source, (short)target};
                celled[nc++] = m;
            }
        }
    }
    for (int i = 0; i < nt; i++) push_move(s, turning[i].card, turning[i].source, turning[i].target);
    for (int i = 0; i < ne; i++) push_move(s, emptying[i].card, emptying[i].source, emptying[i].target);
    for (int i = 0; i < nc; i++) push_move(s, celled[i].card, celled[i].source, celled[i].target);
    for (int i = 0; i < nr; i++) push_move(s, rest[i].card, rest[i].source, rest[i].target);
    if (nempty) {
        if (s->symmetry) {
            if (s->nstock) {
                int kept[MAXCOLS], nk = 0, later = -1;
                for (int i = 0; i < nempty; i++) {
                    if (empty[i] < 3)
                        kept[nk++] = empty[i];
                    else if (later < 0)
                        later = empty[i];
                }
                if (later >= 0) kept[nk++] = later;
                memcpy(empty, kept, sizeof(int) * (size_t)nk);
                nempty = nk;
            } else {
                nempty = 1;
            }
        }
        if (s->wasp) {
            int applies = !s->nstock || (s->early && !s->any_time); /* rules 7 and 8 */
            int settled = applies && s->settled;
            int direct = applies && s->direct; /* rule 8 */
            for (int source = 0; source < n; source++) {
                signed char *col = s->cols[source];
                int first = s->down[source];
                for (int row = first > 1 ? first : 1; row < s->len[source]; row++) {
                    int card = col[row];
                    if (settled && row > first && RANK[card] != 12 && col[row - 1] == card + 1) {
                        idle = 1;
                        continue;
                    }
                    if (direct && RANK[card] != 12) {
                        int home = s->where[card + 1];
                        if (home < n && home != source && s->row[card + 1] == s->len[home] - 1) {
                            idle = 1;
                            continue;
                        }
                    }
                    for (int e = 0; e < nempty; e++) push_move(s, card, source, empty[e]);
                }
            }
        } else {
            for (int k = 0; k < 4; k++) {
                int king = KINGS[k];
                int source = s->where[king];
                if (source < n) {
                    if (s->hidden[king] || s->cols[source][0] == king) continue;
                } else if (source >= STOCK) {
                    continue;
                }
                for (int e = 0; e < nempty; e++) push_move(s, king, source, empty[e]);
            }
        }
    }
    if (s->nstock && (s->any_time || !((int)(s->nmoves - start) || idle))) push_move(s, -1, -1, -1);
    return (int)(s->nmoves - start);
}

/* -- making and unmaking moves ----------------------------------------------------------- */

static void collect(State *s, int index, Undo *u) {
    signed char *col = s->cols[index];
    while (s->len[index] >= 13) {
        int len = s->len[index];
        int ace = col[len - 1];
        if (RANK[ace]) break;
        int suit = ace / 13;
        if (len - 13 < s->down[index]) break;
        int ok = 1;
        for (int i = 0; i < 13; i++)
            if (col[len - 13 + i] != suit * 13 + 12 - i) {
                ok = 0;
                break;
            }
        if (!ok) break;
        for (int i = 0; i < 13; i++) {
            int r = len - 13 + i;
            s->hash ^= card_word(s, col[r], r ? col[r - 1] : -1, index);
        }
        s->len[index] = len - 13;
        for (int i = 0; i < 13; i++) s->where[suit * 13 + i] = FOUNDATION;
        s->found++;
        int flipped = 0;
        len = s->len[index];
        if (len && len == s->down[index]) {
            s->down[index]--;
            s->turned++;
            s->hidden[col[len - 1]] = 0;
            s->hash ^= ZH[(int)col[len - 1]];
            flipped = 1;
        }
        signed char *c = u->collected[u->ncollected++];
        c[0] = (signed char)index;
        c[1] = (signed char)flipped;
        c[2] = (signed char)suit;
    }
}

static Undo *new_undo(State *s) {
    if (!grow((void **)&s->path, &s->path_cap, (size_t)s->depth + 1, sizeof(Undo))) {
        s->failed = 1;
        return NULL;
    }
    Undo *u = &s->path[s->depth++];
    u->ncollected = 0;
    u->flipped = 0;
    u->glen = 0;
    return u;
}

/* Set the column and rows of a moved group's cards, laid from row ``at`` up: four at a
 * time, the group padded with NO_CARD_SLOT, so that the loop's end is the same for every
 * group of up to four cards (its length follows no pattern the processor can guess). */
static inline void set_places(State *s, signed char *group, int glen, int column, int at) {
    group[glen] = group[glen + 1] = group[glen + 2] = NO_CARD_SLOT;
    for (int i = 0; i < glen; i += 4) {
        s->where[group[i]] = column;
        s->row[group[i]] = at + i;
        s->where[group[i + 1]] = column;
        s->row[group[i + 1]] = at + i + 1;
        s->where[group[i + 2]] = column;
        s->row[group[i + 2]] = at + i + 2;
        s->where[group[i + 3]] = column;
        s->row[group[i + 3]] = at + i + 3;
    }
}

/* Make a move whose child hash (child_hash) the caller has; collections and the deal
 * bring it up to date. */
static Undo *push_hashed(State *s, int card, int source, int target, uint64_t hash) {
    Undo *u = new_undo(s);
    if (!u) return NULL;
    u->card = (short)card;
    u->source = (short)source;
    u->target = (short)target;
    u->hash = s->hash;
    s->hash = hash;
    if (card < 0) {
        int dealt = s->nstock;
        for (int index = 0; index < dealt; index++) {
            int c = s->stock[index];
            u->group[index] = (signed char)c;
            s->row[c] = s->len[index];
            s->cols[index][s->len[index]++] = (signed char)c;
            s->where[c] = index;
            s->hidden[c] = 0;
        }
        u->glen = (unsigned char)dealt;
        s->nstock = 0;
        s->hash = position_hash(s);
        for (int index = 0; index < dealt; index++) {
            int len = s->len[index];
            if (!RANK[s->cols[index][len - 1]] && len >= 13) collect(s, index, u);
        }
        return u;
    }
    signed char *dst = s->cols[target];
    if (source >= CELL_BASE) {
        s->cells[source - CELL_BASE] = NO_CARD;
        s->row[card] = s->len[target];
        dst[s->len[target]++] = (signed char)card;
        s->where[card] = target;
        if (!(RANK[card]) && s->len[target] >= 13) collect(s, target, u);
        return u;
    }
    signed char *src = s->cols[source];
    int row = s->row[card];
    int glen = s->len[source] - row;
    u->glen = (unsigned char)glen;
    copy_cards(u->group, MAXLEN, src + row, MAXLEN - row, glen);
    s->len[source] = row;
    if (row && row == s->down[source]) {
        s->down[source] = row - 1;
        s->turned++;
        s->hidden[src[row - 1]] = 0;
        u->flipped = 1;
    }
    int at = s->len[target];
    copy_cards(dst + at, MAXLEN - at, u->group, MAXLEN, glen);
    set_places(s, u->group, glen, target, at);
    s->len[target] = at + glen;
    if (!RANK[dst[at + glen - 1]] && at + glen >= 13) collect(s, target, u);
    if (s->len[source] && !RANK[src[s->len[source] - 1]] && s->len[source] >= 13) collect(s, source, u);
    return u;
}

static Undo *push(State *s, int card, int source, int target) {
    Move move = {(short)card, (short)source, (short)target};
    return push_hashed(s, card, source, target, child_hash(s, s->hash, move));
}

static void pop(State *s) {
    Undo *u = &s->path[--s->depth];
    s->hash = u->hash;
    for (int k = u->ncollected - 1; k >= 0; k--) {
        int index = u->collected[k][0], was_flipped = u->collected[k][1], suit = u->collected[k][2];
        signed char *col = s->cols[index];
        if (was_flipped) {
            s->hidden[col[s->len[index] - 1]] = 1;
            s->down[index]++;
            s->turned--;
        }
        s->found--;
        int at = s->len[index];
        for (int i = 0; i < 13; i++) {
            int moved = suit * 13 + 12 - i;
            col[at + i] = (signed char)moved;
            s->where[moved] = index;
            s->row[moved] = at + i;
        }
        s->len[index] = at + 13;
    }
    int card = u->card, source = u->source, target = u->target;
    if (card < 0) {
        for (int index = 0; index < u->glen; index++) {
            int moved = u->group[index];
            s->len[index]--;
            s->where[moved] = STOCK;
            s->hidden[moved] = 1;
            s->stock[index] = (signed char)moved;
        }
        s->nstock = u->glen;
        return;
    }
    if (source >= CELL_BASE) {
        s->len[target]--;
        s->cells[source - CELL_BASE] = card;
        s->where[card] = source;
        return;
    }
    s->len[target] -= u->glen;
    signed char *src = s->cols[source];
    if (u->flipped) {
        s->hidden[src[s->len[source] - 1]] = 1;
        s->down[source]++;
        s->turned--;
    }
    int at = s->len[source];
    copy_cards(src + at, MAXLEN - at, u->group, MAXLEN, u->glen);
    set_places(s, u->group, u->glen, source, at);
    s->len[source] = at + u->glen;
}

/* -- rule 6: sleep sets ------------------------------------------------------------------ */

static int bit(State *s, int card, int target) {
    if (s->wasp && !s->len[target]) {
        if (s->nstock && target < 3) return card + 52 * (target + 2);
        return card + 52;
    }
    return card;
}

static Mask collectors(State *s, int king) {
    Mask out;
    memset(&out, 0, sizeof out);
    int source = s->where[king];
    if (source >= s->ncols) return out;
    signed char *col = s->cols[source];
    int end = s->row[king];
    int size = s->len[source];
    while (end + 1 < size && RANK[col[end]] && col[end + 1] == col[end] - 1) end++;
    if (!(RANK[col[end]])) {
        if (end + 1 == size) return out;
        int card = col[end + 1];
        if (s->wasp)
            for (int kind = 0; kind < 5; kind++) mask_set(&out, card + 52 * kind);
        else
            mask_set(&out, card);
        return out;
    }
    if (end + 1 < size) return out;
    int card = col[end] - 1;
    if (carries_tail(s, card, s->where[card])) mask_set(&out, card);
    return out;
}

static void mask_andnot(Mask *m, const Mask *other) {
    for (int i = 0; i < WORDS; i++) m->w[i] &= ~other->w[i];
}

static int empty_count(State *s, int from) {
    int count = 0;
    for (int i = from; i < s->ncols; i++)
        if (!s->len[i]) count++;
    return count;
}

/* Would the move of ``card`` (named ``named``, as bit()) make ``below + 1`` top a column
 * other than ``below``'s where it does not now (Search._exposes)? */
static int exposes(State *s, int card, int named, int below) {
    int n = s->ncols, up = below + 1;
    int home = s->where[up];
    if (home >= n) return 0;
    int source = s->where[card], row = s->row[card];
    int at = s->row[up], len = s->len[home];
    if (s->where[below] == home && s->row[below] < at)
        /* below + 1 lies above below: it leaves that column only carried off its top */
        return source == home && s->row[below] < row && row <= at && at == len - 1;
    if (source == home && row == at + 1) return 1;
    if (at + 1 < len && RANK[s->cols[home][at + 1]] == 12) {
        Mask c = collectors(s, s->cols[home][at + 1]);
        return mask_test(&c, named);
    }
    return 0;
}

/* Rule 6 with rule 8 (Search._direct_guard): drop the moves whose rule 8 standing this
 * move changes, or that would change its own. */
static Mask direct_guard(State *s, Mask mask, int card, int target) {
    int own = bit(s, card, target);
    Mask out = mask;
    /* The moves into empty columns asleep whose standing this move changes (bits 52 on). */
    for (int w = 0; w < WORDS; w++) {
        uint64_t bits = mask.w[w];
        if (!w) bits &= ~(((uint64_t)1 << 52) - 1);
        while (bits) {
            int index = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            int other = CARD_OF_BIT[index];
            if (RANK[other] != 12 && exposes(s, card, own, other)) mask_clear(&out, index);
        }
    }
    /* This move is x's into an empty column: every move that would change its standing,
     * found from where x + 1 lies (the cases of exposes() with the roles swapped). */
    if (s->len[target] || RANK[card] == 12) return out;
    int up = card + 1, home = s->where[up];
    if (home >= s->ncols) return out;
    int at = s->row[up], len = s->len[home];
    signed char *col = s->cols[home];
    if (s->where[card] == home && s->row[card] < at) {
        if (at == len - 1)
            for (int r = s->row[card] + 1; r <= at; r++)
                mask_clear_card(&out, col[r]);
        return out;
    }
    if (at + 1 < len) {
        int on = col[at + 1];
        mask_clear_card(&out, on);
        if (RANK[on] == 12) {
            Mask c = collectors(s, on);
            mask_andnot(&out, &c);
        }
    }
    return out;
}

static Mask commuting(State *s, Mask mask, int card, int target) {
    if (s->wasp) {
        mask_clear_card(&mask, card);
        if (s->direct && mask_any(&mask)) mask = direct_guard(s, mask, card, target);
        if (!s->len[target]) {
            if (mask_above_links(&mask)) {
                if (s->nstock && target < 3)
                    mask_clear_kind(&mask, target + 2);
                else if (empty_count(s, s->nstock ? 3 : 0) < 2)
                    mask_clear_kind(&mask, 1);
            }
            if (mask_any(&mask) && RANK[card] == 12) {
                Mask c = collectors(s, card);
                mask_andnot(&mask, &c);
            }
            return mask;
        }
    } else {
        mask_clear(&mask, card);
        if (RANK[card] == 12) {
            uint64_t kings = ((uint64_t)1 << 12) | ((uint64_t)1 << 25) | ((uint64_t)1 << 38) | ((uint64_t)1 << 51);
            if ((mask.w[0] & kings) && empty_count(s, 0) < 2) mask.w[0] &= ~kings;
            if (mask_any(&mask)) {
                Mask c = collectors(s, card);
                mask_andnot(&mask, &c);
            }
            return mask;
        }
    }
    if (!mask_any(&mask)) return mask;
    int n = s->ncols;
    int home = s->where[card];
    int onto = s->where[card + 1];
    int top = home < n ? s->cols[home][s->len[home] - 1] : -1;
    uint64_t kings = ((uint64_t)1 << 12) | ((uint64_t)1 << 25) | ((uint64_t)1 << 38) | ((uint64_t)1 << 51);
    uint64_t rest = mask.w[0] & (((uint64_t)1 << 52) - 1) & ~kings;
    while (rest) {
        int other = __builtin_ctzll(rest);
        rest &= rest - 1;
        if (s->where[other] == onto && top == other + 1) mask.w[0] ^= (uint64_t)1 << other;
    }
    return mask;
}

/* -- rules 3 and 5 ------------------------------------------------------------------------ */

static void dead_table(State *s) {
    memset(s->dead, 0, sizeof s->dead);
    for (int index = 0; index < s->ncols; index++) {
        int down = s->down[index];
        signed char *col = s->cols[index];
        for (int count = 1; count <= down; count++) {
            int any = 0;
            for (int row = 0; row <= count && !any; row++) {
                if (RANK[col[row]] == 12) continue;
                for (int below = 0; below < row; below++)
                    if (col[below] == col[row] + 1) {
                        any = 1;
                        break;
                    }
            }
            s->dead[index][count] = (unsigned char)any;
        }
    }
}

static int is_dead(State *s) {
    for (int index = 0; index < s->ncols; index++)
        if (s->down[index] && s->dead[index][s->down[index]]) return 1;
    return 0;
}

static int waits(State *s, int card) {
    int n = s->ncols;
    int index = s->where[card];
    if (index >= n) return 0;
    signed char *col = s->cols[index];
    int row = s->row[card];
    int kings = s->kings;
    int first = 0;
    if (row < s->down[index]) {
        int above = col[row + 1];
        if (kings || RANK[above] != 12) first = above + 1;
    }
    if (RANK[card] == 12) return kings ? first : 0;
    int successor = card + 1;
    if (row && col[row - 1] == successor) return 0;
    int place = s->where[successor];
    if (place < n) {
        signed char *scol = s->cols[place];
        if (place != index && scol[s->len[place] - 1] == successor) return first;
        int srow = s->row[successor];
        if (place == index && srow > row) {
            int mover = -1, movers = 0;
            for (int k = row + 1; k <= srow; k++) {
                int other = scol[k];
                if (RANK[other] == 12 || scol[k - 1] != other + 1) {
                    mover = other;
                    movers++;
                }
            }
            if (!movers) return -1;
            if (movers == 1 && (kings || RANK[mover] != 12)) return first + 64 * (mover + 1);
            return first;
        }
        int above = scol[srow + 1];
        return (kings || RANK[above] != 12) ? first + 64 * (above + 1) : first;
    }
    if (place < STOCK && (kings || RANK[successor] != 12)) return first + 64 * (successor + 1);
    return first;
}

static void add_seed(State *s, int card) {
    if (s->nseeds >= (int)(sizeof s->seeds / sizeof s->seeds[0]))
        s->seeds_full = 1;
    else
        s->seeds[s->nseeds++] = card;
}

static void newly_waiting(State *s, const Undo *u) {
    int card = u->card, target = u->target;
    if (u->source >= CELL_BASE) {
        if (RANK[card] && s->where[card - 1] == target) add_seed(s, card - 1);
        return;
    }
    int source = u->source;
    int beneath = s->where[card] == target ? s->row[card] : 52;
    for (int i = 0; i < u->glen; i++) {
        int moved = u->group[i];
        if (RANK[moved]) {
            int waiting = s->where[moved - 1];
            if (waiting == source || (waiting == target && s->row[moved - 1] < beneath)) add_seed(s, moved - 1);
        }
    }
}

static int tangled_from(State *s, const int *seeds, int nseeds) {
    uint32_t *mark = s->marks;
    if (s->stamp > 0xfffffff0u) {
        memset(mark, 0, sizeof s->marks);
        s->stamp = 0;
    }
    uint32_t gray = s->stamp + 1;
    uint32_t black = gray + 1;
    s->stamp = black;
    int *stack = s->stack;
    int *later = s->later;
    for (int i = 0; i < nseeds; i++) {
        int start = seeds[i];
        if (mark[start] >= gray) continue;
        mark[start] = gray;
        stack[0] = start * 3;
        int depth = 0;
        while (depth >= 0) {
            int top = stack[depth];
            int card = top / 3;
            int phase = top % 3;
            if (phase == 2) {
                mark[card] = black;
                depth--;
                continue;
            }
            stack[depth] = top + 1;
            int other;
            if (phase == 0) {
                int packed = waits(s, card);
                if (packed < 0) return 1;
                later[card] = packed / 64 - 1;
                other = packed % 64 - 1;
            } else {
                other = later[card];
            }
            if (other < 0) continue;
            uint32_t seen = mark[other];
            if (seen == gray) return 1;
            if (seen < gray) {
                mark[other] = gray;
                stack[++depth] = other * 3;
            }
        }
    }
    return 0;
}

static int tangled(State *s) {
    int seeds[52], nseeds = 0;
    for (int index = 0; index < s->ncols; index++)
        for (int row = 0; row < s->len[index]; row++) seeds[nseeds++] = s->cols[index][row];
    return tangled_from(s, seeds, nseeds);
}

/* -- the search --------------------------------------------------------------------------- */

static void unwind(State *s, int base) {
    while (s->depth > base) pop(s);
}

/* Arrive at a position (see _Run.enter): play forced links, then append its moves to
 * s->moves. Returns the number of moves, or -1 for a dead end (the forced links unwound);
 * ``sleep`` is updated in place. */
static int enter(State *s, int asleep, int seen_at, Mask *sleep, int moved) {
    int base = s->depth;
    s->seen_valid = 0; /* set only by a scan of this position (first_link) */
    Mask again;
    memset(&again, 0, sizeof again);
    int has_again = 0;
    int seeded = 0;
    s->nseeds = 0;
    s->seeds_full = 0;
    if (s->checks && moved && s->path[s->depth - 1].card >= 0) {
        seeded = 1;
        newly_waiting(s, &s->path[s->depth - 1]);
    }
    int rule2 = s->links && (!s->nstock || !(s->any_time || (s->wasp && !s->early)));
    int rule9 = s->bottoms && (!s->nstock || (s->early && !s->any_time));
    int rule10 = s->reversible && s->nstock && !s->early;
    int rule11 = s->anchored && s->nstock && !s->early;
    if (rule2 || rule9 || rule10 || rule11) {
        Move link;
        while (s->found < 4 && first_link(s, &link, rule2, rule9, rule10, rule11)) {
            if (mask_any(sleep)) {
                if (s->wasp && !s->early) /* Wasp: afresh, but not in the first look for a win */
                    memset(sleep, 0, sizeof *sleep);
                else
                    *sleep = commuting(s, *sleep, link.card, link.target);
            }
            Undo *u = push(s, link.card, link.source, link.target);
            if (!u) return -1;
            s->nodes++;
            if (seeded) newly_waiting(s, u);
            if (u->ncollected) memset(sleep, 0, sizeof *sleep);
        }
    }
    size_t start = s->nmoves;
    int count;
    if (s->found < 4) {
        uint64_t h = s->hash;
        if (CHECK_HASHES && h != position_hash(s)) {
            s->failed = 2;
            return -1;
        }
        /* The key's slot was asked for before the move (run_search), but forced links or a
         * collection may have changed the hash since: ask again, and list the moves (the
         * position's, whatever the table says) while it comes. */
        __builtin_prefetch(&s->slots[first_slot(s, h)]);
        count = gen_moves(s);
        if (s->failed) return -1;
        if (rule10) count = reversible_choice(s, start, count);
        if (mask_any(sleep)) {
            /* Every move asleep (the deal never is): nothing to try, and the table is not
             * asked. A new position is not stored: a later arrival finds no entry and tries
             * the moves awake then, which are those it would try at an entry holding this
             * set. At a position stored before, the set kept there stays as it is, where
             * the revisit would keep its members that are asleep here: as every move of
             * the position is, the two differ only in moves it does not have, and no
             * arrival tries another move either way (docs/solver.md, "New positions with
             * every move asleep"). */
            int awake = 0;
            for (size_t i = start; i < start + (size_t)count && !awake; i++) {
                Move m = s->moves[i];
                awake = m.card < 0 || !mask_test(sleep, s->wasp ? bit(s, m.card, m.target) : m.card);
            }
            if (!awake) {
                s->nmoves = start;
                unwind(s, base);
                return -1;
            }
        }
        unsigned char key[256];
        int len = build_key(s, key);
        size_t free_slot = 0;
        unsigned char *stored = table_find(s, key, len, h, &free_slot);
        if (stored) {
            Mask st;
            sleep_load(s, stored, &st);
            int wake = 0;
            for (int w = 0; w < s->words; w++)
                if (st.w[w] & ~sleep->w[w]) wake = 1;
            if (!wake) {
                s->nmoves = start;
                unwind(s, base);
                return -1;
            }
            /* Rule 6's revisit: try the moves asleep then and awake now, with the moves
             * asleep at both arrivals as this one's set, and keep that set (a subset of the
             * stored one, so it fits in its place). */
            for (int w = 0; w < WORDS; w++) {
                again.w[w] = st.w[w] & ~sleep->w[w];
                sleep->w[w] &= st.w[w];
            }
            has_again = 1;
            sleep_store(s, stored, sleep);
        } else {
            table_insert(s, key, len, h, sleep, free_slot);
            if (s->failed) return -1;
            if (s->checks) {
                int lost = 0;
                if (s->turned + 4 * s->nstock != seen_at && is_dead(s))
                    lost = 1;
                else if (!seeded || s->seeds_full)
                    lost = tangled(s);
                else
                    lost = s->nseeds && tangled_from(s, s->seeds, s->nseeds);
                if (lost) {
                    /* the entry just stored: nothing asleep there now */
                    sleep_store(s, s->last, &NO_SLEEP);
                    s->nmoves = start;
                    unwind(s, base);
                    return -1;
                }
            }
        }
    } else {
        count = gen_moves(s);
        if (s->failed) return -1;
    }
    if (asleep && count && s->moves[start + count - 1].card < 0) {
        count--;
        s->nmoves--;
    }
    if (has_again || mask_any(sleep)) {
        size_t kept = start;
        for (size_t i = start; i < start + (size_t)count; i++) {
            Move m = s->moves[i];
            int keep;
            if (has_again)
                keep = m.card >= 0 && mask_test(&again, s->wasp ? bit(s, m.card, m.target) : m.card);
            else
                keep = m.card < 0 || !mask_test(sleep, s->wasp ? bit(s, m.card, m.target) : m.card);
            if (keep) s->moves[kept++] = m;
        }
        count = (int)(kept - start);
        s->nmoves = kept;
    }
    return count;
}

typedef struct {
    size_t start;
    int count, base, covered, checked, cursor;
    Mask sleep, done;
} Frame;

static void free_state(State *s) {
    free(s->path);
    for (int i = 0; i < s->nblocks; i++) table_free(s->blocks[i], (size_t)1 << BLOCK_SHIFT, i > 0);
    size_t slots = ((size_t)1 << s->bits) * sizeof(uint64_t);
    table_free(s->slots, slots, slots >= HUGE_SLOTS);
    free(s->moves);
}

/* Run the search (see search() in protocol/solver/search.py); returns the outcome, with s->path
 * holding the winning line when won, or -1 with a Python error set. */
static int run_search(State *s, int rules, long long limit, int timed, double deadline, PyObject *clock) {
    int commute = (rules & RULE_COMMUTE) && (!s->wasp || (rules & RULE_SETTLED));
    int early = commute && s->wasp && !s->any_time && s->early;
    int sleeps = (rules & RULE_SLEEP) && s->any_time;
    if (s->found == 4) return WON;
    Mask sleep;
    memset(&sleep, 0, sizeof sleep);
    int count = enter(s, 0, -1, &sleep, 0);
    if (s->failed) goto nomem;
    if (s->found == 4) return WON;
    if (count <= 0) return LOST;
    Frame *frames = NULL;
    int nframes = 0;
    size_t cap = 0;
    if (!grow((void **)&frames, &cap, 1, sizeof(Frame))) goto nomem;
    Frame *f = &frames[nframes++];
    f->start = s->nmoves - (size_t)count;
    f->count = count;
    f->base = s->depth;
    f->covered = sleeps;
    f->checked = s->turned + 4 * s->nstock;
    f->cursor = 0;
    f->sleep = sleep;
    memset(&f->done, 0, sizeof f->done);
    int outcome = LOST;
    while (nframes) {
        f = &frames[nframes - 1];
        if (s->depth > f->base) unwind(s, f->base);
        if (f->cursor == f->count) {
            s->nmoves = f->start;
            nframes--;
            continue;
        }
        Move move = s->moves[f->start + (size_t)f->cursor++];
        /* the child's slot is most likely not in the cache: ask for it now, before the
         * move is made, its forced links played and its moves listed (a collection or a
         * forced link makes the guess wrong, which costs only time) */
        uint64_t hash = child_hash(s, s->hash, move);
        if (move.card >= 0) __builtin_prefetch(&s->slots[first_slot(s, hash)]);
        int card = move.card;
        int asleep = f->covered && s->nstock && card >= 0 && move.source > 2 && move.target > 2;
        Mask child;
        memset(&child, 0, sizeof child);
        if (commute && card >= 0 && (early || !s->nstock)) {
            Mask both;
            for (int w = 0; w < WORDS; w++) both.w[w] = f->sleep.w[w] | f->done.w[w];
            child = commuting(s, both, card, move.target);
            mask_set(&f->done, bit(s, card, move.target));
        }
        if (!push_hashed(s, card, move.source, move.target, hash)) {
            free(frames);
            goto nomem;
        }
        s->nodes++;
        long long nodes = s->nodes;
        if (nodes > limit) {
            outcome = UNDECIDED;
            break;
        }
        if (!(nodes & 1023) && PyErr_CheckSignals() < 0) { /* Ctrl-C stops a long search */
            free(frames);
            return -1;
        }
        if (timed && !(nodes & 1023)) {
            PyObject *now = PyObject_CallNoArgs(clock);
            if (!now) {
                free(frames);
                return -1;
            }
            double t = PyFloat_AsDouble(now);
            Py_DECREF(now);
            if (t == -1.0 && PyErr_Occurred()) {
                free(frames);
                return -1;
            }
            if (t > deadline) {
                outcome = UNDECIDED;
                break;
            }
        }
        if (s->found == 4) {
            outcome = WON;
            break;
        }
        int checked = f->checked;
        count = enter(s, asleep, checked, &child, 1);
        if (s->failed) {
            free(frames);
            goto nomem;
        }
        if (s->found == 4) {
            outcome = WON;
            break;
        }
        if (count > 0) {
            if (!grow((void **)&frames, &cap, (size_t)nframes + 1, sizeof(Frame))) {
                free(frames);
                goto nomem;
            }
            f = &frames[nframes++];
            f->start = s->nmoves - (size_t)count;
            f->count = count;
            f->base = s->depth;
            f->covered = sleeps && s->nstock;
            f->checked = s->turned + 4 * s->nstock;
            f->cursor = 0;
            f->sleep = child;
            memset(&f->done, 0, sizeof f->done);
        }
    }
    free(frames);
    return outcome;
nomem:
    if (s->failed == 3) return MEMORY;
    if (s->failed == 2)
        PyErr_SetString(PyExc_RuntimeError, "the search's kept table hash differs from its position's");
    else
        PyErr_SetString(PyExc_MemoryError, "the solver's search ran out of memory");
    return -1;
}

static int read_ints(PyObject *seq, int *out, int max, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: too many entries", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return (int)n;
}

/* Refuse what the arrays cannot hold: a card outside 0-51 or seen twice, a face-down count
 * that leaves no face-up card, more stock than columns. (The engine never builds such a
 * position; this keeps a bad caller from writing outside the arrays.) */
static int validate(State *s) {
    unsigned char seen[52];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < s->ncols; i++) {
        if (s->down[i] < 0 || (s->down[i] && s->down[i] >= s->len[i])) {
            PyErr_Format(PyExc_ValueError, "column %d: face-down count %d with %d cards", i + 1, s->down[i], s->len[i]);
            return -1;
        }
        for (int r = 0; r < s->len[i]; r++) {
            int card = s->cols[i][r];
            if (card < 0 || card >= 52 || seen[card]++) {
                PyErr_Format(PyExc_ValueError, "column %d: bad or repeated card %d", i + 1, card);
                return -1;
            }
        }
    }
    for (int i = 0; i < s->nstock; i++) {
        int card = s->stock[i];
        if (card < 0 || card >= 52 || seen[card]++) {
            PyErr_Format(PyExc_ValueError, "stock: bad or repeated card %d", card);
            return -1;
        }
    }
    for (int i = 0; i < s->ncells; i++) {
        int card = s->cells[i];
        if (card != NO_CARD && (card < 0 || card >= 52 || seen[card]++)) {
            PyErr_Format(PyExc_ValueError, "reserve cell %d: bad or repeated card %d", i + 1, card);
            return -1;
        }
    }
    if (s->found < 0 || s->found > 4) {
        PyErr_Format(PyExc_ValueError, "%d runs collected", s->found);
        return -1;
    }
    return 0;
}

static PyObject *py_search(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *cols, *down, *stock, *cells, *clock;
    int found, wasp, any_time, rules;
    long long limit;
    double seconds;
    int timed;
    Py_ssize_t memory;
    if (!PyArg_ParseTuple(args, "OOOOippiLdpOn", &cols, &down, &stock, &cells, &found, &wasp, &any_time,
                          &rules, &limit, &seconds, &timed, &clock, &memory))
        return NULL;
    if (memory < 0) {
        PyErr_SetString(PyExc_ValueError, "the memory budget is a number of bytes, 0 for none");
        return NULL;
    }
    State *s = calloc(1, sizeof(State));
    if (!s) return PyErr_NoMemory();
    PyObject *result = NULL;
    PyObject *colseq = PySequence_Fast(cols, "columns must be a sequence");
    if (!colseq) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(colseq);
    if (n < 1 || n > MAXCOLS) {
        Py_DECREF(colseq);
        PyErr_Format(PyExc_ValueError, "between 1 and %d columns", MAXCOLS);
        goto done;
    }
    s->ncols = (int)n;
    for (int i = 0; i < n; i++) {
        int cards[MAXLEN];
        int len = read_ints(PySequence_Fast_GET_ITEM(colseq, i), cards, 52, "a column");
        if (len < 0) {
            Py_DECREF(colseq);
            goto done;
        }
        for (int r = 0; r < len; r++)
            if (cards[r] < 0 || cards[r] >= 52) { /* checked before narrowing to a byte */
                Py_DECREF(colseq);
                PyErr_Format(PyExc_ValueError, "column %d: bad or repeated card %d", i + 1, cards[r]);
                goto done;
            }
        s->len[i] = len;
        for (int r = 0; r < len; r++) s->cols[i][r] = (signed char)cards[r];
    }
    Py_DECREF(colseq);
    int values[52];
    int ndown = read_ints(down, s->down, MAXCOLS, "face-down counts");
    if (ndown < 0) goto done;
    if (ndown != s->ncols) {
        PyErr_Format(PyExc_ValueError, "%d face-down counts for %d columns", ndown, s->ncols);
        goto done;
    }
    int nstock = read_ints(stock, values, MAXCOLS, "the stock");
    if (nstock < 0) goto done;
    if (nstock > s->ncols) {
        PyErr_Format(PyExc_ValueError, "a stock of %d cards for %d columns", nstock, s->ncols);
        goto done;
    }
    s->nstock = nstock;
    for (int i = 0; i < nstock; i++) {
        if (values[i] < 0 || values[i] >= 52) {
            PyErr_Format(PyExc_ValueError, "stock: bad or repeated card %d", values[i]);
            goto done;
        }
        s->stock[i] = (signed char)values[i];
    }
    int ncells = read_ints(cells, s->cells, MAXCELLS, "the reserve cells");
    if (ncells < 0) goto done;
    s->ncells = ncells;
    s->found = found;
    s->wasp = wasp;
    s->any_time = any_time;
    s->symmetry = (rules & RULE_SYMMETRY) != 0;
    s->tails = (rules & RULE_TAILS) != 0;
    s->settled = (rules & RULE_SETTLED) != 0;
    s->direct = (rules & RULE_DIRECT) != 0;
    s->early = (rules & RULE_EARLY) != 0;
    s->natural = s->early && (rules & RULE_NATURAL) != 0;
    s->bottoms = wasp && (rules & RULE_BOTTOMS) != 0;
    s->reversible = wasp && !any_time && (rules & RULE_REVERSIBLE) != 0;
    s->anchored = wasp && !any_time && (rules & RULE_ANCHORED) != 0;
    s->stock_suits = 0;
    for (int i = 0; i < nstock; i++) s->stock_suits |= 1 << (s->stock[i] / 13);
    s->kings = (rules & RULE_KINGS) != 0;
    s->links = (rules & RULE_LINKS) != 0;
    s->checks = (rules & RULE_DEAD) && !wasp;
    s->words = wasp ? WORDS : 1;
    if (validate(s) < 0) goto done;
    for (int c = 0; c < 52; c++) s->where[c] = FOUNDATION;
    for (int i = 0; i < s->ncols; i++)
        for (int r = 0; r < s->len[i]; r++) {
            int card = s->cols[i][r];
            s->where[card] = i;
            s->row[card] = r;
            s->hidden[card] = r < s->down[i];
        }
    for (int i = 0; i < s->nstock; i++) {
        s->where[(int)s->stock[i]] = STOCK;
        s->hidden[(int)s->stock[i]] = 1;
    }
    for (int i = 0; i < s->ncells; i++)
        if (s->cells[i] != NO_CARD) s->where[s->cells[i]] = CELL_BASE + i;
    s->bits = 16;
    s->memory = (size_t)memory;
    s->bytes = ((size_t)1 << 16) * sizeof(uint64_t);
    s->slots = table_alloc(((size_t)1 << 16) * sizeof(uint64_t), 0);
    if (!s->slots) {
        PyErr_NoMemory();
        goto done;
    }
    s->hash = position_hash(s);
    if (s->checks) dead_table(s);
    double deadline = 0;
    if (timed) {
        PyObject *now = PyObject_CallNoArgs(clock);
        if (!now) goto done;
        deadline = PyFloat_AsDouble(now) + seconds;
        Py_DECREF(now);
        if (PyErr_Occurred()) goto done;
    }
    int outcome = run_search(s, rules, limit, timed, deadline, clock);
    if (outcome < 0) goto done;
    PyObject *line = PyList_New(0);
    if (!line) goto done;
    if (outcome == WON) {
        for (int i = 0; i < s->depth; i++) {
            Undo *u = &s->path[i];
            PyObject *move = Py_BuildValue("(iii)", u->card, u->source, u->target);
            if (!move || PyList_Append(line, move) < 0) {
                Py_XDECREF(move);
                Py_DECREF(line);
                goto done;
            }
            Py_DECREF(move);
        }
    }
    result = Py_BuildValue("(iNLn)", outcome, line, s->nodes, (Py_ssize_t)s->entries);
done:
    free_state(s);
    free(s);
    return result;
}

static PyObject *py_check_hashes(PyObject *Py_UNUSED(self), PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    CHECK_HASHES = on;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"check_hashes", py_check_hashes, METH_O,
     "check_hashes(on): when on, every position entered compares the table hash its moves"
     " kept with one computed afresh (a RuntimeError if they differ); for tests."},
    {"search", py_search, METH_VARARGS,
     "search(cols, down, stock, cells, found, wasp, any_time, rules, limit, seconds, timed, clock,"
     " memory) -> (outcome, line, nodes, positions kept): protocol.solver.search's search, in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_fastsearch",
    .m_doc = "The solver's search in C (see protocol/solver/search.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__fastsearch(void) {
    make_kinds();
    make_card_bits();
    make_hash_words();
    return PyModule_Create(&module);
}
