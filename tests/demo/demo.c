/* SPDX-License-Identifier: MIT */
/* The bundled demo for `scripts/demo`: a tiny "word index" with the usual mistakes: one leak per
 * duplicate word, a temporary copy per word, and a table that grows by realloc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *word;
	int count;
};

static struct entry *table;
static size_t used, cap;

__attribute__((noinline)) static char *copy_word(const char *w)
{
	char *s = malloc(strlen(w) + 1);
	strcpy(s, w);
	return s;
}

__attribute__((noinline)) static void add_word(const char *w)
{
	char *s = copy_word(w); /* leaked when the word is already present */
	for (size_t i = 0; i < used; i++)
		if (!strcmp(table[i].word, s)) {
			table[i].count++;
			return;
		}
	if (used == cap) {
		cap = cap ? cap * 2 : 4;
		table = realloc(table, cap * sizeof(*table));
	}
	table[used++] = (struct entry){s, 1};
}

__attribute__((noinline)) static int is_stop_word(const char *w)
{
	char *lower = strdup(w); /* a temporary: freed before anything else is allocated */
	int stop = !strcmp(lower, "the") || !strcmp(lower, "a");
	free(lower);
	return stop;
}

__attribute__((noinline)) static void index_line(const char *line)
{
	char *buf = strdup(line);
	for (char *w = strtok(buf, " "); w; w = strtok(NULL, " "))
		if (!is_stop_word(w))
			add_word(w);
	free(buf);
}

int main(void)
{
	static const char *text[] = {
	    "the quick brown fox jumps over the lazy dog",
	    "the dog sleeps and the fox runs",
	    "a lazy afternoon for a quick brown dog",
	};
	for (int round = 0; round < 100; round++)
		for (size_t i = 0; i < sizeof(text) / sizeof(*text); i++)
			index_line(text[i]);
	printf("%zu distinct words\n", used);
	for (size_t i = 0; i < used; i++)
		free(table[i].word);
	free(table);
	return 0;
}
