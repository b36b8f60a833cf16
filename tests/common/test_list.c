/* Intrusive singly linked list helpers: removal at the head, middle and tail, and of an item that
 * is not on the list. */
#include "dsh_list.h"

#include <criterion/criterion.h>
#include <stddef.h>

struct item {
    int id;
    struct item *next;
};

static struct item items[4];

static struct item *chain(void)
{
    for (int i = 0; i < 4; i++)
        items[i] = (struct item){.id = i, .next = i < 3 ? &items[i + 1] : NULL};
    return &items[0];
}

static void expect_ids(struct item *head, const int *ids, size_t n)
{
    size_t i = 0;
    for (struct item *it = head; it; it = it->next, i++) {
        cr_assert_lt(i, n, "list longer than expected");
        cr_expect_eq(it->id, ids[i]);
    }
    cr_expect_eq(i, n);
}

Test(list, remove_head_middle_tail)
{
    struct item *head = chain();
    DSH_LIST_REMOVE(&head, &items[0]);
    expect_ids(head, (int[]){1, 2, 3}, 3);
    DSH_LIST_REMOVE(&head, &items[2]);
    expect_ids(head, (int[]){1, 3}, 2);
    DSH_LIST_REMOVE(&head, &items[3]);
    expect_ids(head, (int[]){1}, 1);
    DSH_LIST_REMOVE(&head, &items[1]);
    cr_expect_null(head);
}

Test(list, removing_an_absent_item_changes_nothing)
{
    struct item *head = chain();
    struct item stranger = {.id = 9};
    DSH_LIST_REMOVE(&head, &stranger);
    expect_ids(head, (int[]){0, 1, 2, 3}, 4);
    struct item *empty = NULL;
    DSH_LIST_REMOVE(&empty, &items[0]);
    cr_expect_null(empty);
}

Test(list, unlink_through_a_found_link)
{
    struct item *head = chain();
    DSH_LIST_FOREACH_LINK(link, &head) {
        if ((*link)->id == 2) {
            DSH_LIST_UNLINK(link);
            cr_expect_eq(*link, &items[3], "the link then names the successor");
            break;
        }
    }
    expect_ids(head, (int[]){0, 1, 3}, 3);
}
